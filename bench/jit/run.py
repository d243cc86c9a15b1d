"""In-process compile benchmark: dynoc.compile vs torch.compile (Inductor) in
the same Python process (docs/capture.md, "In the same process").

For each model of bench/cpu/models.py at each batch:
  - first call: a fresh process per engine and cache state runs the model's
    first compiled call (capture + build + load for dynoc; Dynamo + Inductor
    for torch.compile) with a cold cache (an empty DYNOC_CACHE_DIR /
    TORCHINDUCTOR_CACHE_DIR) and then, in another fresh process, a warm one;
  - steady state, in one process with the same threads: median per-call
    latency of eager, torch.compile, dynoc.compile, and dynoc.load of the
    same built model (the AOT path), reported as speedups over eager;
  - per-call overhead of the guard check + dispatch: a compiled `x + 1` on a
    one-element tensor minus eager's `x + 1`, for dynoc and torch.compile.
Writes docs/perf-jit.md.

Usage: .venv/bin/python bench/jit/run.py [--models mlp,cnn] [--batches 1,32]
       [--min-time 1.0]
Needs `bazel build //...` first.
"""
import argparse
import datetime
import json
import os
import pathlib
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE.parent / "cpu"))

import models  # noqa: E402
from run import geomean, machine, median_latencies  # noqa: E402  (bench/cpu/run.py)

FIRST_CALL = """\
import json, sys, time
sys.path.insert(0, {cpu!r})
start = time.perf_counter()
import torch, models
engine = {engine!r}
if engine == "dynoc":
    import dynoc
    compile_fn = dynoc.compile
else:
    compile_fn = torch.compile
m, x = models.make({name!r}, {batch})
imported = time.perf_counter() - start
c = compile_fn(m)
with torch.no_grad():
    t = time.perf_counter()
    c(x)
    first = time.perf_counter() - t
    t = time.perf_counter()
    c(x)
    second = time.perf_counter() - t
out = {{"first_s": first, "second_s": second}}
if engine == "dynoc":
    out["counters"] = dict(dynoc.counters)
print(json.dumps(out))
"""


def first_call(engine, name, batch, cache, fresh_machine=False):
    """Seconds of the first call (and the second) in a fresh process.
    `fresh_machine`: dynoc's precompiled kernel prelude (~/.cache/dynoc/pch,
    made by the first build on a machine) is cold too."""
    env = dict(os.environ, DYNOC_CACHE_DIR=str(cache / "dynoc"),
               TORCHINDUCTOR_CACHE_DIR=str(cache / "inductor"))
    if fresh_machine:
        env["XDG_CACHE_HOME"] = str(cache / "xdg")
    code = FIRST_CALL.format(cpu=str(HERE.parent / "cpu"), engine=engine, name=name, batch=batch)
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    if p.returncode != 0:
        raise RuntimeError(f"{engine} first call of {name} b{batch}: "
                           f"{p.stderr.strip().splitlines()[-1:]}")
    return json.loads(p.stdout.strip().splitlines()[-1])


def steady_state(name, batch, min_time):
    """Median seconds per call of each engine, in this process."""
    import torch
    import dynoc
    m, x = models.make(name, batch)
    with torch.no_grad():
        compiled = torch.compile(m)
        jit = dynoc.compile(m)
        want = models.main_output(m(x))
        for fn in (compiled, jit):
            fn(x)
        got = models.main_output(jit(x))
        if not torch.allclose(got, want, rtol=1e-3, atol=1e-4):
            raise RuntimeError(f"dynoc.compile's {name} b{batch} differs from eager")
        built = jit._dynoc_region.compiled[0]
        if built is None:
            raise RuntimeError(f"{name} b{batch} was not compiled: "
                               f"{jit._dynoc_region.session.eager_reasons}")
        aot = dynoc.load(built.model.path)
        torch.compiler.reset()  # (frees nothing dynoc uses)
        compiled = torch.compile(m)
        compiled(x)
        engines = {"eager": lambda: m(x), "inductor": lambda: compiled(x),
                   "dynoc.compile": lambda: jit(x), "dynoc.load": lambda: aot(x)}
        return median_latencies(engines, min_time)


def training_step(name, batch, min_time):
    """Median seconds of one training step (forward, a mean-square loss,
    backward, SGD) with the model called eagerly, through torch.compile and
    through dynoc.compile, in this process; and whether dynoc ran its built
    forward and backward (else the reason it ran eagerly)."""
    import torch
    import dynoc
    torch.manual_seed(0)
    m, x = models.make(name, batch)
    m.train()
    for p in m.parameters():
        p.requires_grad_(True)

    def stepper(fn):
        opt = torch.optim.SGD(m.parameters(), lr=1e-6)

        def step():
            loss = models.main_output(fn(x)).float().square().mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        return step
    jit = dynoc.compile(m)
    engines = {"eager": stepper(m), "inductor": stepper(torch.compile(m)),
               "dynoc.compile": stepper(jit)}
    t = median_latencies(engines, min_time)
    region = jit._dynoc_region
    t["compiled"] = bool(region.compiled and region.compiled[0] is not None)
    t["why"] = "; ".join(r["reason"] for r in region.session.eager_reasons[-1:])
    return t


def overhead(min_time):
    """Per-call seconds of compiled `x + 1` minus eager's, per engine."""
    import torch
    import dynoc

    def add_one(x):
        return x + 1
    x = torch.ones(1)
    with torch.no_grad():
        engines = {"eager": lambda: add_one(x),
                   "inductor": (lambda c: lambda: c(x))(torch.compile(add_one)),
                   "dynoc": (lambda c: lambda: c(x))(dynoc.compile(add_one))}
        t = median_latencies(engines, min_time)
    return {"dynoc": t["dynoc"] - t["eager"], "inductor": t["inductor"] - t["eager"]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", default=",".join(models.NAMES))
    ap.add_argument("--batches", default="1,32")
    ap.add_argument("--min-time", type=float, default=1.0)
    ap.add_argument("--train-models", default="mlp,cnn,encoder_block",
                    help="models timed for one training step (grad mode on)")
    ap.add_argument("--train-batch", type=int, default=32)
    ap.add_argument("--out", default=str(ROOT / "docs" / "perf-jit.md"))
    a = ap.parse_args()
    import torch
    rows = []
    for name in a.models.split(","):
        for batch in (int(b) for b in a.batches.split(",")):
            row = {"model": name, "batch": batch}
            with tempfile.TemporaryDirectory() as tmp:
                cache = pathlib.Path(tmp)
                row["dynoc_machine_cold"] = first_call("dynoc", name, batch,
                                                       cache / "machine", True)["first_s"]
                for engine in ("dynoc", "inductor"):
                    cold = first_call(engine, name, batch, cache)
                    warm = first_call(engine, name, batch, cache)
                    row[f"{engine}_cold"], row[f"{engine}_warm"] = cold["first_s"], warm["first_s"]
                    if engine == "dynoc":
                        row["dynoc_warm_hits"] = warm["counters"]["cache_hits"]
            row.update(steady_state(name, batch, a.min_time))
            rows.append(row)
            sys.stderr.write(f"[bench/jit] {name} b{batch}: {json.dumps(row)}\n")
    train = []
    for name in a.train_models.split(","):
        if name:
            row = {"model": name, "batch": a.train_batch,
                   **training_step(name, a.train_batch, a.min_time)}
            train.append(row)
            sys.stderr.write(f"[bench/jit] training {name}: {json.dumps(row)}\n")
    oh = overhead(a.min_time)
    write_table(rows, oh, a.out, torch.__version__, train)


def write_table(rows, oh, path, torch_version, train=()):
    lines = [
        "# In-process compile: dynoc.compile vs torch.compile",
        "",
        f"Machine: {machine()}; torch {torch_version}, {__import__('torch').get_num_threads()} "
        f"threads; {datetime.date.today()}. `bench/jit/run.py` (its docstring says how).",
        "",
        "First call (seconds, a fresh process each; cold: empty DYNOC_CACHE_DIR / "
        "TORCHINDUCTOR_CACHE_DIR; warm: the cache the cold process filled; dynoc's "
        "first build on a machine also precompiles its kernel prelude header "
        "(~/.cache/dynoc/pch, once per compiler and dynoc version): the column "
        "'dynoc, new machine' has that cold too):",
        "",
        "| model | batch | dynoc, new machine | dynoc cold | Inductor cold | "
        "dynoc/Inductor | dynoc warm | Inductor warm |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        lines.append(f"| {r['model']} | {r['batch']} | {r['dynoc_machine_cold']:.2f} | "
                     f"{r['dynoc_cold']:.2f} | "
                     f"{r['inductor_cold']:.2f} | {r['dynoc_cold'] / r['inductor_cold']:.2f}x | "
                     f"{r['dynoc_warm'] * 1e3:.0f} ms | {r['inductor_warm']:.2f} |")
    lines += [
        "",
        "Steady state (median per call in one process; speedup over eager):",
        "",
        "| model | batch | eager | torch.compile | dynoc.compile | dynoc.load (AOT) | "
        "dynoc.compile / dynoc.load |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        e = r["eager"]
        lines.append(f"| {r['model']} | {r['batch']} | {e * 1e6:.0f} us | "
                     f"{e / r['inductor']:.2f}x | {e / r['dynoc.compile']:.2f}x | "
                     f"{e / r['dynoc.load']:.2f}x | {r['dynoc.load'] / r['dynoc.compile']:.2f} |")
    lines += [
        "",
        f"Geomean: cold first call dynoc/Inductor "
        f"{geomean([r['dynoc_cold'] / r['inductor_cold'] for r in rows]):.2f}x; "
        f"steady state dynoc.compile {geomean([r['eager'] / r['dynoc.compile'] for r in rows]):.2f}x "
        f"eager, {geomean([r['inductor'] / r['dynoc.compile'] for r in rows]):.2f}x Inductor, "
        f"{geomean([r['dynoc.load'] / r['dynoc.compile'] for r in rows]):.2f} of dynoc.load's speed.",
        "",
        "One training step with grad mode on (forward, a mean-square loss, backward, "
        "SGD; the model called eagerly, through torch.compile, or through "
        "dynoc.compile, which runs its built forward and backward):",
        "",
        "| model | batch | eager step | torch.compile | dynoc.compile | dynoc ran built code |",
        "| --- | --- | --- | --- | --- | --- |",
        *[f"| {r['model']} | {r['batch']} | {r['eager'] * 1e3:.2f} ms | "
          f"{r['eager'] / r['inductor']:.2f}x | {r['eager'] / r['dynoc.compile']:.2f}x | "
          f"{'yes' if r['compiled'] else 'no: ' + r['why']} |" for r in train],
        "",
        f"Per-call overhead (compiled `x + 1` on one element minus eager's): dynoc "
        f"{oh['dynoc'] * 1e6:.1f} us, torch.compile {oh['inductor'] * 1e6:.1f} us.",
        "",
        "Reading the tables. dynoc's cold first call is capture (the call runs "
        "eagerly under the evaluator) plus `dynoc build` (passes, C++ generation, "
        "the C++ compile against the precompiled prelude) plus the load; a warm "
        "first call is the capture and the load of the cache entry. `dynoc.load` "
        "runs the same cache entry's model.so through the AOT path, so the last "
        "column is the in-process dispatch alone: the region's dispatcher (in C: "
        "its guards as checks, module attribute checks skipped while nothing they "
        "read changed; docs/capture.md, \"The call path\"), the version check "
        "of weights the model derives something from, and the Python the AOT path "
        "runs too (the DLPack exchange, rebuilding the result: a transformers "
        "`ModelOutput` costs tens of microseconds to construct, as it does in "
        "eager). At batch 1 on this 2-core machine with 2 threads, repeated "
        "runs of one row differ by a few percent."
        " The training rows run the same backward code as a `dynoc build` of a captured backward graph, through one extra autograd Function per call; where it is slower than eager (conv and attention backward kernels, unfused elementwise backward) is what docs/perf-train.md analyses for the training issue.",
        "",
    ]
    pathlib.Path(path).write_text("\n".join(lines))
    json_path = pathlib.Path(path).with_suffix(".json")
    json_path.write_text(json.dumps({"rows": rows, "overhead": oh, "training": list(train)},
                                    indent=1))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
