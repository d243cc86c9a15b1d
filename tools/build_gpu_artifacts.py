#!/usr/bin/env python3
"""Builds what tools/test_gpu.sh and bench/cuda/run.py run on the GPU machine,
here, on a machine without a GPU: `dynoc capture` of each model of the suite at
batch 1 and 32, in float32 and bfloat16, and `dynoc build --target=cuda` of it, the model's eager weights
(state_dict) to compare against, and the CUDA build of each op case
(test/gpu/cuda_cases.py), and the training steps of bench/train/gpu.py
(its `prepare`). Writes build/gpu/ (carry it to the GPU machine).

The op cases build first, in parallel (the first of them compiles the CUDA
kernel library into the cache); the models' captures run in parallel, then
their builds one at a time, three times each, so that the build time each
records (build.json: the median, the machine; the benchmark's "dynoc build s")
is that of a build alone on this machine.

usage: tools/build_gpu_artifacts.py [--models-only | --ops-only] [-j N]
"""
import argparse
import concurrent.futures
import json
import os
import pathlib
import statistics
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "test" / "gpu"))
sys.path.insert(0, str(ROOT / "bench"))
import cuda_cases  # noqa: E402
from runtime_overhead import machine  # noqa: E402  (the benchmarks' machine line)

DYNOC = ROOT / "bazel-bin" / "tools" / "dynoc" / "dynoc"
OUT = pathlib.Path(cuda_cases.ARTIFACTS)
CAPTURES = ROOT / "build" / "gpu-captures"

CAPTURE_SCRIPT = """\
import sys
sys.path.insert(0, {bench!r})
import torch, models
m, x = models.make({name!r}, {batch})
m = m.to({dtype})
if x.is_floating_point():
    x = x.to({dtype})
torch.save(m.state_dict(), {weights!r})
with torch.no_grad():
    torch.compile(m)(x)
"""


def run(args, what):
    p = subprocess.run([str(a) for a in args], capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"{what} failed:\n{p.stderr[-3000:]}")
    return p


def capture_model(name, batch, dtype):
    """Captures one model (reusing an unchanged capture); returns its graph."""
    d = OUT / "models" / cuda_cases.model_dir(name, batch, dtype)
    d.mkdir(parents=True, exist_ok=True)
    # The capture stays here, outside build/gpu (the carry to the GPU machine
    # is limited to 64 MiB): a rebuild with a new dynoc reuses it when the
    # capture script is unchanged.
    cap = CAPTURES / d.name
    cap.mkdir(parents=True, exist_ok=True)
    script_text = CAPTURE_SCRIPT.format(bench=str(ROOT / "bench" / "cpu"), name=name,
                                        batch=batch, weights=str(d / "eager.pt"),
                                        dtype=str(cuda_cases.torch_dtype(dtype)))
    script = cap / "capture.py"
    what = f"{name} b{batch} {dtype}"
    shared = pathlib.Path(cuda_cases.eager_weights(name, dtype))
    fresh = (script.exists() and script.read_text() == script_text
             and (cap / "capture" / "manifest.json").exists()
             and (d / "eager.pt" != shared or shared.exists()))
    if not fresh:
        script.write_text(script_text)
        run([DYNOC, "capture", script, "-o", cap / "capture"], f"capture of {what}")
    if d / "eager.pt" != shared:
        # The same seeded model as batch 1's, whose copy the GPU side loads
        # (cuda_cases.eager_weights).
        (d / "eager.pt").unlink(missing_ok=True)
    manifest = json.loads((cap / "capture" / "manifest.json").read_text())
    if len(manifest["graphs"]) != 1:
        raise RuntimeError(f"{what}: {len(manifest['graphs'])} graphs")
    return cap / "capture" / manifest["graphs"][0]["mlir"]


def build_model(name, batch, dtype, graph, repeats):
    """Builds one model `repeats` times; records the median wall time."""
    d = OUT / "models" / cuda_cases.model_dir(name, batch, dtype)
    what = f"{name} b{batch} {dtype}"
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run([DYNOC, "build", "--target=cuda", graph, "-o", d / "model.so"],
            f"CUDA build of {what}")
        times.append(time.perf_counter() - start)
    build_s = statistics.median(times)
    (d / "build.json").write_text(json.dumps({"build_s": build_s, "builds_s": times,
                                              "machine": machine()}))
    return f"{what}: built in {build_s:.1f} s (median of {repeats})"


def build_op(name):
    import torch
    import test_cpu_ops as t
    d = OUT / "ops"
    d.mkdir(parents=True, exist_ok=True)
    c = t.CASES[name]
    ref = c["ref"](*t.make_inputs(name))
    safe = "".join(ch if ch.isalnum() else "_" for ch in name)
    graph = d / f"{safe}.mlir"
    t.write_graph(graph, c, list(ref.shape), t.MLIR_DTYPE[ref.dtype])
    run([DYNOC, "build", "--target=cuda", graph, "-o", d / f"{safe}.so"], f"CUDA build of {name}")
    return f"op {name}: built"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models-only", action="store_true")
    ap.add_argument("--ops-only", action="store_true")
    ap.add_argument("-j", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--build-repeats", type=int, default=3, metavar="N",
                    help="build each model N times (one at a time) and record the "
                         "median build time (default 3)")
    ap.add_argument("--only", metavar="WORDS",
                    help="comma-separated words: rebuild only the models and op cases "
                         "whose name contains one (after a change to one kernel)")
    args = ap.parse_args()
    words = args.only.split(",") if args.only else None

    def wanted(name):
        return words is None or any(w in name for w in words)
    models = [(n, b, dt) for n in cuda_cases.MODELS for b in cuda_cases.BATCHES
              for dt in cuda_cases.DTYPES if wanted(n)] if not args.ops_only else []
    ops = [n for n in cuda_cases.op_cases() if wanted(n)] if not args.models_only else []
    total = len(models) + len(ops)
    done = failed = 0

    def report(step):
        """Prints what `step()` says, or its failure (counted)."""
        nonlocal done, failed
        done += 1
        try:
            print(f"[{done}/{total}] {step()}", flush=True)
        except Exception as e:  # noqa: BLE001 - reported, counted
            failed += 1
            print(f"[{done}/{total}] FAILED: {e}", flush=True)

    with concurrent.futures.ThreadPoolExecutor(args.j) as pool:
        for f in concurrent.futures.as_completed([pool.submit(build_op, n) for n in ops]):
            report(f.result)
        captures = {m: pool.submit(capture_model, *m) for m in models}
    for m, f in captures.items():
        report(lambda m=m, f=f: build_model(*m, f.result(), args.build_repeats))
    # What runs there beside the artifacts: the Python binding (stable ABI:
    # the GPU machine's Python 3.12 imports it), the 8-thread test and
    # dynrt-bench (libdynrt only: no MLIR there).
    binaries = OUT / "bin"
    binaries.mkdir(parents=True, exist_ok=True)
    for src in ("lib/runtime/python/_dynrt.abi3.so", "test/gpu/threads_cuda",
                "tools/bench/dynrt-bench"):
        target = binaries / pathlib.Path(src).name
        target.unlink(missing_ok=True)
        target.write_bytes((ROOT / "bazel-bin" / src).read_bytes())
        target.chmod(0o755)
    if not args.ops_only and words is None:
        # The training steps (test/gpu/test_cuda_train.py, bench/train/gpu.py).
        p = subprocess.run([sys.executable, ROOT / "bench" / "train" / "gpu.py", "prepare"])
        if p.returncode != 0:
            failed += 1
            print("FAILED: bench/train/gpu.py prepare", flush=True)
    print(f"wrote {OUT} ({total - failed}/{total} built)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
