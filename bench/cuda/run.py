#!/usr/bin/env python3
"""GPU benchmark (run on the GPU machine, over build/gpu from
tools/build_gpu_artifacts.py): torch eager, torch.compile (inductor default),
torch.compile(mode="reduce-overhead") and dynoc (from Python through
dynoc.load, and from C++ through test/gpu/threads_cuda --bench) on the model
suite at batch 1 and 32, float32 and bfloat16, in one process with
interleaved rounds.
Reports median latency, ratios, compile/build time and peak GPU memory, and
writes perf-cuda.md and perf-cuda.png into --out.

usage: bench/cuda/run.py [--out DIR] [--rounds N] [--models a,b] [--dtypes f32,bf16]
       bench/cuda/run.py --from-json A.json B.json ... --out DIR
         (one table from the rows of several runs, e.g. one device call each)
"""
import argparse
import gc
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

# Inductor's compile time is a first compile of each model: its on-disk caches
# (FX graphs, autotuning, Triton kernels) off, so that a second run on the same
# machine does not time cache hits. Its in-process state is warm after the
# first model. Set before torch is imported.
os.environ.setdefault("TORCHINDUCTOR_FORCE_DISABLE_CACHES", "1")
os.environ.setdefault("TRITON_CACHE_DIR", tempfile.mkdtemp(prefix="dynoc-bench-triton-"))

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT / "test" / "gpu"))
import cuda_cases  # noqa: E402
import torch  # noqa: E402
import models  # noqa: E402  (bench/cpu, on the path through cuda_cases)

ART = pathlib.Path(cuda_cases.ARTIFACTS)
# Every engine in full f32 (dynoc's f32 builds use TF32 only with
# --allow-tf32; torch's cuDNN convolutions would otherwise use it).
torch.backends.cudnn.allow_tf32 = False
torch.backends.cuda.matmul.allow_tf32 = False
ENGINES = ["eager", "inductor", "reduce-overhead", "dynoc", "dynoc-cpp"]


def timed(fn, x, iters):
    """Median ms of `iters` calls, each synchronized (latency, as a server sees it)."""
    times = []
    for _ in range(iters):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        fn(x)
        torch.cuda.synchronize()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def cuda_library_env():
    """The environment for the C++ runner: torch's CUDA libraries (cuBLASLt,
    cuDNN, the runtime) on the library path, as a C++ server would set it."""
    import nvidia
    base = list(nvidia.__path__)[0]
    dirs = [os.path.join(base, "cu13", "lib"), os.path.join(base, "cudnn", "lib")]
    env = dict(os.environ)
    env["LD_LIBRARY_PATH"] = ":".join(dirs + [env.get("LD_LIBRARY_PATH", "")])
    return env


def bench_model(name, batch, dtype, rounds, iters):
    d = ART / "models" / cuda_cases.model_dir(name, batch, dtype)
    dt = cuda_cases.torch_dtype(dtype)
    m, _ = models.make(name, batch)
    m = m.to(dt)
    m.load_state_dict(torch.load(cuda_cases.eager_weights(name, dtype)))
    m = m.cuda().eval()
    torch.manual_seed(1)
    x = models.example_input(name, batch).cuda()
    if x.is_floating_point():
        x = x.to(dt)
    row = {"model": name, "batch": batch, "dtype": dtype,
           "gpu": torch.cuda.get_device_name(), "torch": torch.__version__,
           "cuda": torch.version.cuda}
    fns, mem = {}, {}
    # What each engine holds to run the model: the weights plus what its three
    # calls allocate (activations, workspaces, CUDA-graph pools). torch's
    # engines: its allocator's peak over their calls, plus `m`'s weights, which
    # they share. dynoc: the device memory a load and three calls take outside
    # torch's allocator (weights, workspace, CUDA graphs) plus the outputs torch
    # allocates for it. Workspaces count (cuBLAS's is freed before each of
    # torch's engines, which allocates it again); code does not: the libraries'
    # kernels (cuBLAS, cuDNN, the model's own) are loaded by a warm-up first.
    weights = sum(t.numel() * t.element_size() for t in m.state_dict().values())

    def measure_mem(key, make):
        gc.collect()
        torch.cuda.synchronize()
        if key != "dynoc" and hasattr(torch._C, "_cuda_clearCublasWorkspaces"):
            # cuBLAS keeps its workspace in torch's allocator once allocated:
            # freed here, the engine's calls allocate it again, in its figure.
            torch._C._cuda_clearCublasWorkspaces()
        torch.cuda.reset_peak_memory_stats()
        free0 = torch.cuda.mem_get_info()[0]
        base = torch.cuda.memory_allocated()
        fn = make()
        with torch.no_grad():
            for _ in range(3):
                fn(x)
        torch.cuda.synchronize()
        torch_peak = torch.cuda.max_memory_allocated() - base
        if key == "dynoc":
            outside = free0 - torch.cuda.mem_get_info()[0]
            mem[key] = (torch_peak + outside) / 2**20
        else:
            mem[key] = (torch_peak + weights) / 2**20
        return fn

    with torch.no_grad():
        m(x)  # warm-up: cuBLAS/cuDNN loaded
        row["cublas_workspace_counted"] = hasattr(torch._C, "_cuda_clearCublasWorkspaces")
        row["inductor_disk_caches_off"] = os.environ["TORCHINDUCTOR_FORCE_DISABLE_CACHES"] == "1"
        fns["eager"] = measure_mem("eager", lambda: m)
        t0 = time.perf_counter()
        comp = torch.compile(m)
        fns["inductor"] = measure_mem("inductor", lambda: comp)
        row["inductor_compile_s"] = time.perf_counter() - t0
        torch._dynamo.reset()
        ro = torch.compile(m, mode="reduce-overhead")
        fns["reduce-overhead"] = measure_mem("reduce-overhead", lambda: ro)
        import dynoc
        warm = dynoc.load(d / "model.so")  # its kernels and libraries loaded
        for _ in range(2):
            warm(x)
        del warm
        built = dynoc.load(d / "model.so")
        fns["dynoc"] = measure_mem("dynoc", lambda: built)
        ref = models.main_output(m(x))
        got = models.main_output(built(x)).double()
        err = ((got - ref.double()).norm() / ref.double().norm()).item()
    row["dynoc_rel_err"] = err
    build = json.loads((d / "build.json").read_text())
    row["dynoc_build_s"] = build["build_s"]
    row["dynoc_build_machine"] = build.get("machine", "the build machine")
    times = {k: [] for k in fns}
    with torch.no_grad():
        for _ in range(rounds):  # interleaved: drift hits every engine alike
            for k, fn in fns.items():
                times[k].append(timed(fn, x, iters))
    for k in fns:
        row[f"{k}_ms"] = statistics.median(times[k])
        row[f"{k}_mib"] = mem[k]
    shape = [str(s) for s in x.shape]
    cmd = [str(ART / "bin" / "threads_cuda"), str(d / "model.so"), *shape, "--bench",
           "--iters", str(iters * rounds)]
    if x.dtype == torch.int64:
        cmd += ["--int64", "1000"]
    elif x.dtype == torch.bfloat16:
        cmd += ["--bf16"]
    p = subprocess.run(cmd, capture_output=True, text=True, env=cuda_library_env())
    row["dynoc-cpp_ms"] = (float(p.stdout.split()[-1]) if p.returncode == 0
                           else float("nan"))
    if p.returncode != 0:
        print(p.stderr, file=sys.stderr)
    return row


def geomean(xs):
    xs = [x for x in xs if x == x and x > 0]
    return float("nan") if not xs else statistics.geometric_mean(xs)


def report(rows, out):
    first = next((r for r in rows if "gpu" in r), {})
    gpu = first.get("gpu", "?")
    lines = [
        "# GPU performance (float32 and bfloat16)", "",
        f"Machine: {gpu}, torch {first.get('torch', '?')}, CUDA {first.get('cuda', '?')}. "
        "Written by `bench/cuda/run.py` on the GPU machine (device tool) over models "
        "captured and built on a machine without a GPU (`tools/build_gpu_artifacts.py`). "
        "Median latency of a synchronized call (ms), engines interleaved in one process; "
        "ratios are engine time / dynoc time (> 1: dynoc faster). dynoc runs CUDA graphs "
        "(captured on a context's second call), as reduce-overhead does. Peak memory: "
        "what each engine holds to run the model, its weights plus what three calls "
        "allocate (activations, workspaces, CUDA-graph pools): for eager, Inductor and "
        "reduce-overhead, the model's weights plus torch's allocator peak during the "
        "calls, cuBLAS's workspace freed before them so that they allocate it again; "
        "for dynoc, the device memory its load and three calls take (weights, "
        "workspace with the 8 MiB cuBLASLt/cuDNN workspace, CUDA graphs) plus the "
        "outputs torch allocates for it. Loaded code is not counted: a warm-up call of "
        "eager and a load and call of dynoc's model come first. TF32 is off everywhere (torch's "
        "cuDNN default turned off; dynoc builds without --allow-tf32). Compile/build "
        "time: Inductor's, torch.compile and the first three calls, in the benchmark "
        "process on the GPU machine, its on-disk caches off (FX graph, autotuning and "
        "Triton caches: a first compile; its in-process state warm after the first "
        "model); dynoc's, "
        "`dynoc build --target=cuda` (graph to .so) on the build machine "
        f"({first.get('dynoc_build_machine', '?')}; `tools/build_gpu_artifacts.py`, "
        "the median of 3 builds one at a time, with the CUDA kernel library already "
        "in its cache).", "",
        "| model | batch | dtype | eager ms | inductor ms | reduce-overhead ms | dynoc ms (Python) "
        "| dynoc ms (C++) | vs eager | vs inductor | vs reduce-overhead | inductor compile s "
        "| dynoc build s | peak MiB eager / inductor / r-o / dynoc | dynoc rel. error |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['model']} | {r['batch']} | {r['dtype']} | {r['error']} |")
            continue
        dy = r["dynoc_ms"]
        lines.append(
            f"| {r['model']} | {r['batch']} | {r['dtype']} | {r['eager_ms']:.3f} | {r['inductor_ms']:.3f} | "
            f"{r['reduce-overhead_ms']:.3f} | {dy:.3f} | {r['dynoc-cpp_ms']:.3f} | "
            f"{r['eager_ms'] / dy:.2f}x | {r['inductor_ms'] / dy:.2f}x | "
            f"{r['reduce-overhead_ms'] / dy:.2f}x | {r['inductor_compile_s']:.1f} | "
            f"{r['dynoc_build_s']:.1f} | {r['eager_mib']:.0f} / {r['inductor_mib']:.0f} / "
            f"{r['reduce-overhead_mib']:.0f} / {r['dynoc_mib']:.0f} | {r['dynoc_rel_err']:.1e} |")
    ok = [r for r in rows if "error" not in r]
    for dtype, b in [(dt, b) for dt in cuda_cases.DTYPES for b in cuda_cases.BATCHES]:
        rb = [r for r in ok if r["batch"] == b and r["dtype"] == dtype]
        if not rb:
            continue
        lines.append("")
        lines.append(
            f"{dtype} batch {b} geomean: {geomean([r['eager_ms'] / r['dynoc_ms'] for r in rb]):.2f}x "
            f"eager, {geomean([r['inductor_ms'] / r['dynoc_ms'] for r in rb]):.2f}x inductor, "
            f"{geomean([r['reduce-overhead_ms'] / r['dynoc_ms'] for r in rb]):.2f}x "
            "reduce-overhead.")
    (out / "perf-cuda.md").write_text("\n".join(lines) + "\n")
    (out / "perf-cuda.json").write_text(json.dumps(rows, indent=1))
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots(figsize=(14, 5))
        labels = [f"{r['model']} b{r['batch']} {r['dtype']}" for r in ok]
        w = 0.2
        for i, k in enumerate(["eager", "inductor", "reduce-overhead", "dynoc"]):
            ax.bar([j + (i - 1.5) * w for j in range(len(ok))],
                   [r[f"{k}_ms"] for r in ok], w, label=k)
        ax.set_xticks(range(len(ok)))
        ax.set_xticklabels(labels, rotation=60, ha="right", fontsize=7)
        ax.set_ylabel("median latency, ms (lower is better)")
        ax.set_yscale("log")
        ax.set_title(f"float32 and bfloat16 on {gpu}")
        ax.legend()
        fig.tight_layout()
        fig.savefig(out / "perf-cuda.png", dpi=110)
    except Exception as e:  # noqa: BLE001 - the table is the result
        print(f"no chart: {e}", file=sys.stderr)
    print("\n".join(lines))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.environ.get("OUT", "."))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--models", default=",".join(cuda_cases.MODELS))
    ap.add_argument("--dtypes", default=",".join(cuda_cases.DTYPES))
    ap.add_argument("--from-json", nargs="+", metavar="JSON",
                    help="report the rows of earlier runs' perf-cuda.json instead of running")
    args = ap.parse_args()
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    if args.from_json:
        for f in args.from_json:
            rows += json.loads(pathlib.Path(f).read_text())
        report(rows, out)
        return
    for dtype in args.dtypes.split(","):
        for name in args.models.split(","):
            for b in cuda_cases.BATCHES:
                try:
                    rows.append(bench_model(name, b, dtype, args.rounds, args.iters))
                except Exception as e:  # noqa: BLE001 - one row says what failed
                    rows.append({"model": name, "batch": b, "dtype": dtype,
                                 "error": f"failed: {e}"[:200]})
                print(json.dumps(rows[-1]), flush=True)
                # Kept as it grows: a run stopped by a time limit keeps its rows.
                (out / "perf-cuda.json").write_text(json.dumps(rows, indent=1))
                torch._dynamo.reset()
    report(rows, out)


if __name__ == "__main__":
    main()
