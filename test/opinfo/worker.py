"""One worker process of the op-coverage suite: reads tasks (an OpInfo key and
a dtype, one JSON object a line) on stdin, runs up to N samples of each through
dynoc.compile, and writes one JSON line per sample on stdout, preceded by a
`start` line so that the driver can name the sample a crash or hang hit.

A sample's outcome:
  pass   dynoc captured one graph with no break, the built code ran (the
         compiled_calls counter moved) and its result equals eager's within
         torch.testing.assert_close's default tolerance for the dtype
  eager  dynoc ran the call eagerly: a graph break, or the graph did not build
         (the reason dynoc gave)
  wrong  the result differs from eager's (built or not)
  error  dynoc raised where eager did not
  none   the call records no graph (nothing to build: a value, an alias)
  skip   eager itself raises on the sample, or the op is random
"""
import json
import os
import sys
import warnings
import zlib

import torch
from torch.utils._pytree import tree_flatten

import dynoc
import samples as _samples


def _clone(tensors):
    return [t.clone() for t in tensors]


def _compare(actual, expected, values=True):
    """None when `actual` equals `expected` (tensors within assert_close's
    default tolerance for the dtype, NaNs equal; only shapes and dtypes where
    not `values`), else what differs."""
    a, a_spec = tree_flatten(actual)
    e, e_spec = tree_flatten(expected)
    if a_spec != e_spec:
        return f"structure {a_spec} != {e_spec}"
    for i, (x, y) in enumerate(zip(a, e)):
        if isinstance(y, torch.Tensor):
            if not isinstance(x, torch.Tensor):
                return f"output {i}: {type(x).__name__}, eager gives a tensor"
            if not values:
                if (x.shape, x.dtype) != (y.shape, y.dtype):
                    return f"output {i}: {x.dtype}{list(x.shape)}, eager {y.dtype}{list(y.shape)}"
                continue
            try:
                torch.testing.assert_close(x, y, equal_nan=True, check_stride=False)
            except AssertionError as err:
                return f"output {i}: " + " ".join(str(err).split())[:300]
        elif x != y and not (x != x and y != y):
            return f"output {i}: {x!r} != {y!r}"
    return None


def _rms_error(x, ref):
    d = (x.double() - ref).nan_to_num(0.0)
    return d.pow(2).mean().sqrt().item() if d.numel() else 0.0


def _as_accurate(fn, tensors, actual, expected):
    """Where a floating result differs from eager's beyond the tolerance: is
    it as accurate as eager's, measured against the op computed in float64?
    (torch._dynamo's own rule for compiled results: the RMS error against
    float64 at most twice eager's, plus 1e-6, a tenth of
    assert_close's atol.) dynoc
    computes bf16/f16 ops in f32 and rounds once; eager's kernels round some
    partial results, so the two differ by an ulp where both are right."""
    try:
        ref = fn(*[t.double() if t.is_floating_point() else t.clone() for t in tensors])
    except Exception:
        return False
    a, _ = tree_flatten(actual)
    e, _ = tree_flatten(expected)
    r, _ = tree_flatten(ref)
    if len(r) != len(a):
        return False
    for x, y, z in zip(a, e, r):
        if not isinstance(y, torch.Tensor) or not y.is_floating_point():
            continue
        if not isinstance(z, torch.Tensor) or z.shape != y.shape:
            return False
        if x.isnan().ne(y.isnan()).any():
            return False
        if _rms_error(x, z.double()) > 2 * _rms_error(y, z.double()) + 1e-6:
            return False
    return True


def _reason(caught):
    for w in caught:
        text = str(w.message)
        if "run eagerly, not compiled:" in text:
            text = text.split("not compiled:", 1)[1]
            return text.split(" (DYNOC_LOGS=")[0].strip()
    return "ran eagerly (no reason given)"


def run_sample(info, fn, tensors):
    """The outcome of one sample: {"outcome", "detail", "ops"}."""
    try:
        expected = fn(*_clone(tensors))
    except Exception as e:
        return {"outcome": "skip", "detail": f"eager raises {type(e).__name__}"}
    dynoc.reset()
    try:
        explained = dynoc.explain(fn)(*_clone(tensors))
    except Exception as e:
        return {"outcome": "error", "detail": f"capture raised {type(e).__name__}: {e}"[:400]}
    ops = sorted({op for g in explained.ops_per_graph for op in g})
    if explained.graph_break_count:
        why = explained.break_reasons[0]
        why = why.get("reason", why) if isinstance(why, dict) else why
        return {"outcome": "eager", "detail": f"graph break: {why}"[:400], "ops": ops}
    random = [op for op in ops if any(w in op for w in _samples.RANDOM_WORDS)]
    if random:  # dropout_p > 0, for one
        return {"outcome": "skip", "ops": ops,
                "detail": f"random ({', '.join(random)}): needs a test of its statistics"}
    if explained.graph_count == 0:
        return {"outcome": "none", "detail": "no graph", "ops": ops}
    dynoc.reset()
    compiled = dynoc.compile(fn)
    before = dict(dynoc.counters)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            compiled(*_clone(tensors))  # the capture
            ran_from = dynoc.counters["compiled_calls"]
            actual = compiled(*_clone(tensors))
    except Exception as e:
        return {"outcome": "error", "detail": f"{type(e).__name__}: {e}"[:400], "ops": ops}
    built = (dynoc.counters["compiled_calls"] > ran_from
             and dynoc.counters["eager_variants"] == before["eager_variants"])
    differs = _compare(actual, expected, info.name not in _samples.UNDEFINED_VALUES)
    if differs and built and _as_accurate(fn, tensors, actual, expected):
        return {"outcome": "pass", "ops": ops, "detail": f"as accurate as eager: {differs}"}
    if differs:
        how = "built code" if built else "eager fallback"
        return {"outcome": "wrong", "detail": f"{how}: {differs}", "ops": ops}
    if not built:
        return {"outcome": "eager", "detail": _reason(caught)[:400], "ops": ops}
    return {"outcome": "pass", "ops": ops}


def main():
    warnings.filterwarnings("ignore", message=".*TypedStorage.*")
    chosen = _samples.selected()
    limit = int(os.environ.get("DYNOC_OPINFO_SAMPLES", "3"))
    device = os.environ.get("DYNOC_OPINFO_DEVICE", "cpu")
    out = sys.stdout
    for line in sys.stdin:
        task = json.loads(line)
        info, _ = chosen[task["op"]]
        dtype = _samples.BY_NAME[task["dtype"]]
        first = task.get("from", 0)
        only = task.get("only")
        torch.manual_seed(zlib.crc32(f"{task['op']} {task['dtype']}".encode()))  # same samples each run
        try:
            generated = info.sample_inputs(device, dtype, requires_grad=False)
            for i, sample in enumerate(generated):
                if i >= limit:
                    break
                if i < first or (only is not None and i not in only):
                    continue
                where = {"op": task["op"], "dtype": task["dtype"], "sample": i}
                out.write(json.dumps({"start": where}) + "\n")
                out.flush()
                fn, tensors = _samples.call(info, sample)
                row = run_sample(info, fn, tensors)
                out.write(json.dumps(dict(where, **row)) + "\n")
                out.flush()
        except Exception as e:  # the sample generator itself
            where = {"op": task["op"], "dtype": task["dtype"], "sample": -1}
            out.write(json.dumps(dict(where, outcome="skip",
                                      detail=f"samples raise {type(e).__name__}")) + "\n")
        out.write(json.dumps({"done": task}) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
