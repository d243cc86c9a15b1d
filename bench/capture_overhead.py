"""Capture-time overhead: what running a program under dynoc's evaluator costs
against a plain run, on the model suite (bench/cpu/models.py).

For each model, in one process per engine (fresh caches, same thread count):
  - eager: the first call of model(x), and the median of later calls;
  - dynoc: the first call of dynoc.compile(model)(x) — the evaluator runs the
    forward, records the graph and guards — and, as a peer, torch.compile with
    a backend that only counts graphs (Dynamo's tracing without Inductor);
  - whole program: wall time of `python3 script.py` (torch.compile routed to an
    eager no-op) against `dynoc capture script.py`, which also verifies and
    writes the graphs, weights and manifest.
Writes docs/perf-capture.md.

Models are bench/cpu/models.py's names, or `hf:NAME` for an architecture of
the real-program suite (test/realworld/models.py: a transformers model from a
small config, called with its documented inputs). `--hf` adds a default set.

Usage: bench/capture_overhead.py [--models mlp,cnn,...] [--hf] [--out docs/perf-capture.md]
Needs `bazel build //...` first.
"""
import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench" / "cpu"))
DYNOC = ROOT / "bazel-bin/tools/dynoc/dynoc"
MODELS = ["mlp", "cnn", "encoder_block", "bert", "gpt2"]
# Real-program suite architectures --hf adds: encoders, decoders, an
# encoder-decoder, vision and speech.
HF_MODELS = ["hf:deberta-v2", "hf:bloom", "hf:llama", "hf:t5", "hf:bart", "hf:whisper",
             "hf:swin", "hf:wav2vec2"]
REALWORLD = ROOT / "test" / "realworld" / "models.py"

# Makes (model, args, kwargs) for a name: bench/cpu/models.py's, or hf:NAME.
MAKE = """
def make(name):
    if name.startswith("hf:"):
        import importlib.util, transformers
        spec = importlib.util.spec_from_file_location("realworld_models", {rw!r})
        rw = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(rw)
        _, config_cls, model_cls, config, kind = next(
            m for m in rw.MODELS if m[0] == name[3:])
        ns = {{"torch": torch, "g": torch.Generator().manual_seed(1)}}
        exec(rw._INPUTS[kind], ns)
        config = getattr(transformers, config_cls)(**config)
        return getattr(transformers, model_cls)(config).eval(), (), ns["kwargs"]
    model, x = models.make(name, 1)
    return model, (x,), {{}}
"""

# One engine's timings, printed as JSON by a child process.
CHILD = textwrap.dedent("""
    import json, statistics, sys, time
    sys.path.insert(0, {cpu!r})
    import torch
    torch.set_num_threads({threads})
    import models
    {make}
    engine, name = sys.argv[1], sys.argv[2]
    model, args, kwargs = make(name)
    with torch.no_grad():
        if engine == "eager":
            fn = model
        elif engine == "dynoc":
            import dynoc
            fn = dynoc.compile(model)
        else:
            import torch._dynamo
            fn = torch.compile(model, backend=lambda gm, ex: gm.forward)
        if engine != "eager":  # one-time imports and set-up, not this model's capture
            warm = (dynoc.compile if engine == "dynoc" else
                    lambda f: torch.compile(f, backend=lambda gm, ex: gm.forward))
            warm(lambda t: t + 1)(torch.ones(1))
        t0 = time.perf_counter()
        fn(*args, **kwargs)
        first = time.perf_counter() - t0
        later = []
        for _ in range(20):
            t0 = time.perf_counter()
            fn(*args, **kwargs)
            later.append(time.perf_counter() - t0)
    print(json.dumps({{"first": first, "later": statistics.median(later)}}))
""")

SCRIPT = textwrap.dedent("""
    import sys
    sys.path.insert(0, {cpu!r})
    import torch
    import models
    {make}
    model, args, kwargs = make({name!r})
    cm = torch.compile(model)
    with torch.no_grad():
        for _ in range(3):
            cm(*args, **kwargs)
    print("done")
""")

# `python3 script.py` with torch.compile an eager no-op: the plain run.
PLAIN = textwrap.dedent("""
    import runpy, sys, torch
    torch.compile = lambda m=None, **kw: m
    sys.argv = sys.argv[1:]
    runpy.run_path(sys.argv[0], run_name="__main__")
""")


def _make_source():
    return MAKE.format(rw=str(REALWORLD)).strip()


def python_of(version):
    """The project's environment for CPython `version` (tools/bootstrap.sh)."""
    return sys.executable if version is None else str(ROOT / f".venv-{version}" / "bin" / "python")


def child(engine, name, threads, version=None):
    code = CHILD.format(cpu=str(ROOT / "bench" / "cpu"), threads=threads, make=_make_source())
    # dynoc's first call captures only: DYNOC_COMPILE=0 leaves out the build
    # and load the in-process JIT would add (the capture is what is compared).
    # Other versions' environments are shared: this checkout's package.
    env = dict(os.environ, DYNOC_COMPILE="0", PYTHONPATH=os.pathsep.join(
        str(ROOT / d) for d in ("python", "bazel-bin/lib/capture",
                                "bazel-bin/lib/runtime/python")))
    p = subprocess.run([python_of(version), "-c", code, engine, name], capture_output=True,
                       text=True, check=True, env=env)
    return json.loads(p.stdout.strip().splitlines()[-1])


def child_median(engine, name, threads, version=None, runs=3):
    """child(), run `runs` times: its first call is a single sample per
    process, and a small model's capture (a few ms) is at the mercy of the
    machine; the run with the median first call."""
    results = sorted((child(engine, name, threads, version) for _ in range(runs)),
                     key=lambda r: r["first"])
    return results[len(results) // 2]


def wall(args):
    t0 = time.perf_counter()
    subprocess.run(args, capture_output=True, check=True)
    return time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--hf", action="store_true", help="add the real-program suite models")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--repeat", type=int, default=3, help="whole-program runs per engine")
    ap.add_argument("--out", default=str(ROOT / "docs" / "perf-capture.md"))
    ap.add_argument("--pythons", default="",
                    help="other CPython versions to compare first calls on, e.g. 3.12,3.13 "
                         "(their .venv-X.Y: DYNOC_PYTHON=X.Y tools/bootstrap.sh)")
    a = ap.parse_args()
    versions = [v for v in a.pythons.split(",") if v]
    mine = "%d.%d" % sys.version_info[:2]
    sys.path.insert(0, str(ROOT / "bench"))
    from runtime_overhead import machine
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        plain = pathlib.Path(tmp) / "plain.py"
        plain.write_text(PLAIN)
        names = a.models.split(",") + (HF_MODELS if a.hf else [])
        for name in names:
            print(f"[capture-bench] {name}", file=sys.stderr, flush=True)
            e, t = (child(x, name, a.threads) for x in ("eager", "dynamo"))
            d = child_median("dynoc", name, a.threads)
            script = pathlib.Path(tmp) / f"{name.replace(':', '_')}.py"
            script.write_text(SCRIPT.format(cpu=str(ROOT / "bench" / "cpu"), name=name,
                                            make=_make_source()))
            py = statistics.median(wall([sys.executable, plain, script]) for _ in range(a.repeat))
            cap = statistics.median(
                wall([DYNOC, "capture", "-o", pathlib.Path(tmp) / f"out_{name.replace(':', '_')}", script])
                for _ in range(a.repeat))
            other = {v: (child_median("dynoc", name, a.threads, v), child("dynamo", name, a.threads, v))
                     for v in versions}
            rows.append((name, e, d, t, py, cap, other))
    lines = [
        "# Capture-time overhead",
        "",
        f"Machine: {machine()}, {a.threads} threads, torch {__import__('torch').__version__}. "
        "Produced by `bench/capture_overhead.py`.",
        "",
        "First call: the call that captures (dynoc's evaluator records the graph; Dynamo traces "
        "with a graph-counting backend, no Inductor; dynoc's: the median of 3 processes), after both engines captured a one-op "
        "function once (one-time imports are not counted). Later calls: median of 20 calls on a guard "
        "hit (dynoc and that Dynamo backend both run eagerly then). Whole program: wall time of "
        "`python3 script.py` (torch.compile an eager no-op) against `dynoc capture script.py` "
        "(which also verifies and writes graphs, weights and manifest); the script builds the "
        "model and calls it 3 times.",
        "",
        "| model | eager first call (ms) | dynoc capture call (ms) | × eager | Dynamo trace call (ms) "
        "| dynoc ÷ Dynamo | dynoc later call (ms) | eager later (ms) | python3 script (s) "
        "| dynoc capture script (s) | overhead (s) |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, e, d, t, py, cap, _ in rows:
        lines.append(
            f"| {name} | {e['first'] * 1e3:.1f} | {d['first'] * 1e3:.1f} | "
            f"{d['first'] / e['first']:.1f}× | {t['first'] * 1e3:.1f} | "
            f"{d['first'] / t['first']:.2f} | {d['later'] * 1e3:.2f} | {e['later'] * 1e3:.2f} | "
            f"{py:.2f} | {cap:.2f} | {cap - py:+.2f} |")
    if versions:
        lines += [
            "",
            "## Per Python version",
            "",
            "The capture call against Dynamo's trace on each CPython version, each in its own "
            "environment (the same torch release; 3.12 and 3.13 have PyPI's CUDA build, run on "
            "the CPU). dynoc ÷ Dynamo: the target is ≤ 0.05 on every model and version.",
            "",
            "| model | " + " | ".join(f"{v}: dynoc (ms) | {v}: Dynamo (ms) | {v}: dynoc ÷ Dynamo"
                                    for v in [mine] + versions) + " |",
            "|---|" + "---|---|---|" * (1 + len(versions)),
        ]
        for name, e, d, t, py, cap, other in rows:
            cells = [(d, t)] + [other[v] for v in versions]
            lines.append(f"| {name} | " + " | ".join(
                f"{x['first'] * 1e3:.1f} | {y['first'] * 1e3:.1f} | {x['first'] / y['first']:.3f}"
                for x, y in cells) + " |")
    pathlib.Path(a.out).write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
