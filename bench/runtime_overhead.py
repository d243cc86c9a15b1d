"""Per-call overhead of libdynrt on a guard hit, against torch.compile's.

Builds test/models/tiny_add.mlir (x + y on 4 floats, so the kernel costs next
to nothing), then in one run measures:
  - from C++ (bench/runtime_overhead/overhead): the model's raw C ABI call,
    dynrt_context_run_into (caller buffers) and dynrt_context_run (runtime
    allocates the output);
  - from Python, same process, same thread count: torch eager `x + y`,
    torch.compile(backend="inductor") of the same function (guards hit), and
    dynoc.load() of the built model.
Writes docs/perf-runtime.md.

Usage: bench/runtime_overhead.py [--iterations N] [--out docs/perf-runtime.md]
Needs `bazel build //...` first.
"""
import argparse
import datetime
import json
import os
import pathlib
import platform
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
DYNOC = ROOT / "bazel-bin/tools/dynoc/dynoc"
OVERHEAD = ROOT / "bazel-bin/bench/runtime_overhead/overhead"


def machine():
    model = platform.processor() or "unknown CPU"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{model}, {os.cpu_count()} logical cores, {platform.system()} {platform.release()}"


def ns_per_call(fn, iters, rounds=25):
    times = []
    for _ in range(rounds):
        start = time.perf_counter_ns()
        for _ in range(iters):
            fn()
        times.append((time.perf_counter_ns() - start) / iters)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--iterations", type=int, default=20000)
    ap.add_argument("--out", default=str(ROOT / "docs/perf-runtime.md"))
    args = ap.parse_args()
    for exe in (DYNOC, OVERHEAD):
        if not exe.exists():
            sys.exit(f"runtime_overhead: {exe} is missing; run `bazel build //...` first")

    import torch
    import dynoc

    torch.set_grad_enabled(False)
    with tempfile.TemporaryDirectory() as tmp:
        so = pathlib.Path(tmp) / "tiny_add.so"
        subprocess.run([DYNOC, "build", ROOT / "test/models/tiny_add.mlir", "-o", so],
                       check=True, stderr=subprocess.DEVNULL)
        cpp = json.loads(subprocess.run([OVERHEAD, so, str(args.iterations)], check=True,
                                        capture_output=True, text=True).stdout)

        x, y = torch.rand(4), torch.rand(4)

        def add(a, b):
            return a + b

        compiled = torch.compile(add, backend="inductor")
        start = time.perf_counter()
        compiled(x, y)
        compile_s = time.perf_counter() - start
        model = dynoc.load(so)
        assert torch.equal(model(x, y), x + y) and torch.equal(compiled(x, y), x + y)
        py_iters = max(args.iterations // 10, 1000)
        eager_ns = ns_per_call(lambda: add(x, y), py_iters)
        compiled_ns = ns_per_call(lambda: compiled(x, y), py_iters)
        dynoc_py_ns = ns_per_call(lambda: model(x, y), py_iters)

    us = lambda ns: f"{ns / 1000:.2f}"
    rows = [
        ("dynoc, C++: raw model call (kernel only, no runtime)", cpp["raw_ns"], "—"),
        ("dynoc, C++: `dynrt_context_run_into` (guards + caller buffers)", cpp["run_into_ns"],
         us(cpp["run_into_ns"] - cpp["raw_ns"])),
        ("dynoc, C++: `dynrt_context_run` (guards + output allocated)", cpp["run_ns"],
         us(cpp["run_ns"] - cpp["raw_ns"])),
        ("PyTorch eager, Python: `x + y`", eager_ns, "—"),
        ("torch.compile (inductor), Python: compiled `x + y`, guards hit", compiled_ns,
         us(compiled_ns - eager_ns) + " (vs eager)"),
        ("dynoc, Python: `dynoc.load(...)(x, y)`", dynoc_py_ns,
         us(dynoc_py_ns - cpp["raw_ns"])),
    ]
    target = cpp["run_into_ns"] - cpp["raw_ns"] <= 2000
    lines = [
        "# Runtime per-call overhead",
        "",
        f"Measured {datetime.date.today()} by `bench/runtime_overhead.py` on {machine()};",
        f"torch {torch.__version__}, {torch.get_num_threads()} intra-op threads, "
        f"Python {platform.python_version()}.",
        "",
        "The graph is `x + y` on two float32 tensors of 4 elements "
        "(test/models/tiny_add.mlir), so a call's time is almost all overhead. Each "
        f"number is the median of 25 rounds of {args.iterations} (C++) or {py_iters} "
        "(Python) calls.",
        "",
        "| path | per call (µs) | overhead (µs) |",
        "|---|---:|---:|",
    ]
    lines += [f"| {name} | {us(ns)} | {over} |" for name, ns, over in rows]
    lines += [
        "",
        f"Target: ≤ 2 µs of runtime overhead per call from C++ on a guard hit — "
        f"{'met' if target else 'NOT met'} "
        f"({us(cpp['run_into_ns'] - cpp['raw_ns'])} µs with caller buffers, "
        f"{us(cpp['run_ns'] - cpp['raw_ns'])} µs with runtime-allocated outputs).",
        f"torch.compile's first call (compile) took {compile_s:.1f} s; dynoc built the "
        "model ahead of time.",
        "",
        "Overhead of a dynoc path is its time minus the raw model call. torch.compile's is "
        "its time minus eager's: both run the same one-op kernel through Python.",
        "",
    ]
    pathlib.Path(args.out).write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
