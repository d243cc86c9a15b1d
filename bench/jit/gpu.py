"""In-process compile benchmark on the GPU: dynoc.compile vs torch.compile
(Inductor) in the same Python process, CUDA models (issue 16).

For each model of bench/cpu/models.py, moved to the GPU, at each batch:
  - first call: a fresh process per engine and cache state runs the model's
    first compiled call (capture + `dynoc build --target=cuda` + load for
    dynoc; Dynamo + Inductor + Triton for torch.compile), with its caches
    empty (DYNOC_CACHE_DIR; TORCHINDUCTOR_CACHE_DIR and TRITON_CACHE_DIR),
    then in another fresh process with them warm. dynoc's CUDA kernel
    library (compiled once per nvcc) is warm in both: the first build on a
    machine pays it once (its time is printed);
  - steady state, in one process: the median latency of one call including
    its GPU work (the call, then torch.cuda.synchronize()) of eager,
    torch.compile, torch.compile(mode="reduce-overhead"), dynoc.compile, and
    dynoc.compile(mode="reduce-overhead") (CUDA graphs), as speedups over
    eager;
  - per-call overhead of the guard check + dispatch: a compiled `x + 1` on a
    one-element CUDA tensor minus eager's, for dynoc and torch.compile.
TF32 stays off (both engines compute f32 GEMMs in full f32).

Usage (on the GPU machine, after tools/gpu_jit.sh stage here):
  tools/gpu_jit.sh bench [--models mlp,bert] [--batches 1,32] [--out FILE]
Writes FILE (default $OUT/perf-jit-cuda.md; docs/perf-jit-cuda.md keeps it).
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
sys.path.insert(0, str(HERE.parent / "cpu"))

import models  # noqa: E402
from run import geomean, median_latencies  # noqa: E402  (bench/cpu/run.py)

FIRST_CALL = """\
import json, sys, time
sys.path.insert(0, {cpu!r})
import torch, models
torch.backends.cuda.matmul.allow_tf32 = False
engine = {engine!r}
if engine == "dynoc":
    import dynoc
    compile_fn = dynoc.compile
else:
    compile_fn = torch.compile
m, x = models.make({name!r}, {batch})
m, x = m.cuda(), x.cuda()
torch.cuda.synchronize()
c = compile_fn(m)
with torch.no_grad():
    t = time.perf_counter()
    c(x)
    torch.cuda.synchronize()
    first = time.perf_counter() - t
out = {{"first_s": first}}
if engine == "dynoc":
    out["counters"] = dict(dynoc.counters)
print(json.dumps(out))
"""


def first_call(engine, name, batch, cache):
    env = dict(os.environ, DYNOC_CACHE_DIR=str(cache / "dynoc"),
               TORCHINDUCTOR_CACHE_DIR=str(cache / "inductor"),
               TRITON_CACHE_DIR=str(cache / "triton"))
    code = FIRST_CALL.format(cpu=str(HERE.parent / "cpu"), engine=engine, name=name, batch=batch)
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    if p.returncode != 0:
        raise RuntimeError(f"{engine} first call of {name} b{batch}: "
                           f"{p.stderr.strip().splitlines()[-3:]}")
    return json.loads(p.stdout.strip().splitlines()[-1])


def synced(fn):
    import torch

    def call():
        fn()
        torch.cuda.synchronize()
    return call


def steady_state(name, batch, min_time):
    """Median seconds per call (GPU work included) of each engine."""
    import torch
    import dynoc
    m, x = models.make(name, batch)
    m, x = m.cuda(), x.cuda()
    with torch.no_grad():
        want = models.main_output(m(x))
        engines = {"eager": m}
        engines["inductor"] = torch.compile(m)
        engines["inductor ro"] = torch.compile(m, mode="reduce-overhead")
        engines["dynoc"] = dynoc.compile(m)
        engines["dynoc ro"] = dynoc.compile(m, mode="reduce-overhead")
        for key in ("dynoc", "dynoc ro"):
            for _ in range(3):
                got = models.main_output(engines[key](x))
            if not torch.allclose(got, want, rtol=1e-3, atol=1e-3):
                raise RuntimeError(f"{key} of {name} b{batch} differs from eager: max error "
                                   f"{(got - want).abs().max().item():.3e}")
            if engines[key]._dynoc_region.compiled[0] is None:
                raise RuntimeError(f"{key}: {name} b{batch} was not compiled: "
                                   f"{engines[key]._dynoc_region.session.eager_reasons}")
        calls = {k: synced((lambda f: lambda: f(x))(f)) for k, f in engines.items()}
        return median_latencies(calls, min_time)


def overhead(min_time):
    """Per-call seconds of compiled `x + 1` minus eager's, per engine (no
    synchronize: the host-side cost)."""
    import torch
    import dynoc

    def add_one(x):
        return x + 1
    x = torch.ones(1, device="cuda")
    with torch.no_grad():
        engines = {"eager": lambda: add_one(x),
                   "inductor": (lambda c: lambda: c(x))(torch.compile(add_one)),
                   "dynoc": (lambda c: lambda: c(x))(dynoc.compile(add_one))}
        t = median_latencies(engines, min_time)
    torch.cuda.synchronize()
    return {"dynoc": t["dynoc"] - t["eager"], "inductor": t["inductor"] - t["eager"],
            "eager": t["eager"]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", default="mlp,cnn,encoder_block,bert,gpt2")
    ap.add_argument("--batches", default="1,32")
    ap.add_argument("--min-time", type=float, default=1.0)
    ap.add_argument("--parts", default="steady,first,overhead",
                    help="what to measure (a device call is limited: split the run)")
    ap.add_argument("--merge", nargs="+", metavar="JSON",
                    help="write the table from the results of earlier runs only")
    ap.add_argument("--out", default=os.path.join(os.environ.get("OUT", "/tmp"),
                                                  "perf-jit-cuda.md"))
    a = ap.parse_args()
    if a.merge:
        results = {"rows": [], "firsts": [], "overhead": None}
        for path in a.merge:
            r = json.loads(pathlib.Path(path).read_text())
            results["rows"] += r["rows"]
            results["firsts"] += r["firsts"]
            results["overhead"] = r["overhead"] or results["overhead"]
            results["machine"] = r["machine"]
        write_table(results, a.out)
        return
    import torch
    torch.backends.cuda.matmul.allow_tf32 = False
    names, batches = a.models.split(","), [int(b) for b in a.batches.split(",")]
    parts = set(a.parts.split(","))
    results = {"rows": [], "firsts": [], "overhead": None,
               "machine": {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__,
                           "python": sys.version.split()[0], "date": str(datetime.date.today())}}
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            for batch in batches if "steady" in parts else ():
                r = {"model": name, "batch": batch}
                r.update(steady_state(name, batch, a.min_time))
                results["rows"].append(r)
                print(json.dumps(r), flush=True)
            if "first" not in parts:
                continue
            batch = batches[0]
            f = {"model": name, "batch": batch}
            for engine in ("dynoc", "inductor"):
                cache = pathlib.Path(tmp) / f"{engine}-{name}"
                f[engine + " cold"] = first_call(engine, name, batch, cache)["first_s"]
                f[engine + " warm"] = first_call(engine, name, batch, cache)["first_s"]
            results["firsts"].append(f)
            print(json.dumps(f), flush=True)
    if "overhead" in parts:
        results["overhead"] = overhead(a.min_time)
        print(json.dumps(results["overhead"]), flush=True)
    pathlib.Path(a.out).with_suffix(".json").write_text(json.dumps(results, indent=1))
    write_table(results, a.out)


def write_table(results, path):
    rows, firsts, oh, m = results["rows"], results["firsts"], results["overhead"], \
        results["machine"]
    lines = [
        "# In-process compilation on the GPU (dynoc.compile vs torch.compile)", "",
        f"Measured {m['date']} by `bench/jit/gpu.py` (through `tools/gpu_jit.sh "
        f"bench`) on one {m['gpu']}, torch {m['torch']} (Inductor, Triton), "
        f"Python {m['python']}. The models of bench/cpu/models.py on the GPU, "
        "float32, TF32 off, `torch.no_grad()`. dynoc builds with `--target=cuda` for this "
        "GPU in the same process (the statically linked `dynoc` binary of "
        "`bazel build --config=portable`). What is measured: bench/jit/gpu.py's docstring.",
        "", "## Steady state", "",
        "Median latency of one call including its GPU work (ms), and speedup over eager. "
        "`ro`: `mode=\"reduce-overhead\"` (CUDA graphs for both engines).", "",
        "| model | batch | eager ms | torch.compile | torch.compile ro | dynoc.compile "
        "| dynoc.compile ro | dynoc ro vs best torch.compile |",
        "|---|---:|---:|---:|---:|---:|---:|---:|"]
    ratios = []
    for r in rows:
        e = r["eager"]
        best = min(r["inductor"], r["inductor ro"])
        ratios.append(best / r["dynoc ro"])
        lines.append(f"| {r['model']} | {r['batch']} | {e * 1e3:.3f} | "
                     f"{e / r['inductor']:.2f}x | {e / r['inductor ro']:.2f}x | "
                     f"{e / r['dynoc']:.2f}x | {e / r['dynoc ro']:.2f}x | {ratios[-1]:.2f}x |")
    if ratios:
        lines += ["", f"dynoc.compile ro vs the faster torch.compile mode, geomean: "
                      f"{geomean(ratios):.2f}x.", ""]
    if firsts:
        lines += ["## First call", "",
                  "Seconds of the first compiled call in a fresh process (capture, build, "
                  "load, run), with empty caches (cold) and with the caches the cold run "
                  "filled (warm).", "",
                  "| model | batch | dynoc cold | torch.compile cold | dynoc / torch.compile "
                  "| dynoc warm | torch.compile warm |", "|---|---:|---:|---:|---:|---:|---:|"]
        for f in firsts:
            lines.append(f"| {f['model']} | {f['batch']} | {f['dynoc cold']:.2f} | "
                         f"{f['inductor cold']:.2f} | "
                         f"{f['dynoc cold'] / f['inductor cold']:.2f}x | "
                         f"{f['dynoc warm']:.3f} | {f['inductor warm']:.3f} |")
        lines.append("")
    if oh:
        lines += ["## Per-call overhead", "",
                  "A compiled `x + 1` on a one-element CUDA tensor minus eager's (host "
                  f"time, no synchronize; eager's call {oh['eager'] * 1e6:.1f} µs): dynoc "
                  f"{oh['dynoc'] * 1e6:.1f} µs, torch.compile {oh['inductor'] * 1e6:.1f} µs.",
                  ""]
    pathlib.Path(path).write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
