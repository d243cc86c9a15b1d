"""Attention at the sizes LLMs run, on the GPU: `F.scaled_dot_product_attention`
(causal, bf16) as torch runs it eagerly (its flash/cuDNN kernels), under
torch.compile, and built by dynoc (dynoc.compile), each engine in a process of
its own (torch's never imports dynoc). Shapes: GPT-2 small's (8x512, 12 heads,
head dim 64), a Llama-style decoder's (8x512, 16 query and 4 key/value heads,
head dim 64), and a head dim of 128 (8x1024, 32 query and 8 key/value heads).

Reports the median of synchronized calls (CUDA events), the achieved TFLOP/s
(4 * B * Hq * L * S * D multiply-adds x2, halved for causal), and dynoc's
relative error against eager in float64. Also each engine's peak allocator
memory for one call.

  python3 bench/cuda/attention.py                 (on the GPU machine; dynoc
                                                   via tools/gpu_jit.sh's env)
  python3 bench/cuda/attention.py --engine NAME   one engine, one process (internal)
"""
import argparse
import json
import os
import subprocess
import sys

SHAPES = [  # name, batch, query heads, key/value heads, length, head dim
    ("gpt2-small 8x512", 8, 12, 12, 512, 64),
    ("llama-style 8x512 (GQA 16/4)", 8, 16, 4, 512, 64),
    ("head dim 128, 8x1024 (GQA 32/8)", 8, 32, 8, 1024, 128),
]
ENGINES = ["eager", "torch.compile", "dynoc"]


def measure(engine):
    import torch
    import torch.nn.functional as F

    def attend(q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True,
                                              enable_gqa=k.shape[1] != q.shape[1])

    def compiled():  # a fresh region per shape: each a static variant, as in a model
        if engine == "torch.compile":
            return torch.compile(attend)
        if engine == "dynoc":
            import dynoc
            return dynoc.compile(attend)
        return attend
    rows = []
    for name, b, hq, hkv, t, d in SHAPES:
        fn = compiled()
        if engine == "dynoc":
            import dynoc
            before = dynoc.counters["compiled_calls"]
        torch.manual_seed(0)
        q = torch.randn(b, hq, t, d, device="cuda", dtype=torch.bfloat16)
        k, v = (torch.randn(b, hkv, t, d, device="cuda", dtype=torch.bfloat16)
                for _ in range(2))
        with torch.no_grad():
            for _ in range(3):
                out = fn(q, k, v)
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
            base = torch.cuda.memory_allocated()
            out = fn(q, k, v)
            torch.cuda.synchronize()
            peak = torch.cuda.max_memory_allocated() - base
            times = []
            for _ in range(30):
                s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                s.record()
                fn(q, k, v)
                e.record()
                e.synchronize()
                times.append(s.elapsed_time(e))
            ref = attend(q.double(), k.double(), v.double())
        times.sort()
        ms = times[len(times) // 2]
        flops = 4.0 * b * hq * t * t * d / 2  # causal: half the scores
        err = ((out.double() - ref).norm() / ref.norm()).item()
        row = {"shape": name, "ms": ms, "tflops": flops / ms / 1e9, "rel_err": err,
               "peak_mib": peak / 2**20}
        if engine == "dynoc":  # built code ran on every timed call, not eager's
            row["compiled_calls"] = dynoc.counters["compiled_calls"] - before
            assert row["compiled_calls"] >= 31, f"{name}: dynoc ran eagerly {row}"
        rows.append(row)
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--engine", choices=ENGINES)
    args = ap.parse_args()
    if args.engine:
        print(json.dumps(measure(args.engine)))
        return 0
    import torch
    results = {}
    for engine in ENGINES:
        p = subprocess.run([sys.executable, __file__, "--engine", engine],
                           capture_output=True, text=True, env=dict(os.environ))
        if p.returncode != 0:
            print(f"{engine} failed:\n{p.stderr[-3000:]}", file=sys.stderr)
            continue
        results[engine] = json.loads(p.stdout.strip().splitlines()[-1])
    print(f"GPU: {torch.cuda.get_device_name()} | torch {torch.__version__} | bf16, causal")
    print("| shape | " + " | ".join(f"{e} ms (TFLOP/s)" for e in results) +
          " | dynoc vs best torch | dynoc rel. error | peak MiB (eager / dynoc) |")
    print("|---|" + "---:|" * (len(results) + 3))
    for i, (name, *_rest) in enumerate(SHAPES):
        cells = [f"{results[e][i]['ms']:.3f} ({results[e][i]['tflops']:.0f})" for e in results]
        best = min(results[e][i]["ms"] for e in results if e != "dynoc")
        d = results.get("dynoc", [{}] * len(SHAPES))[i]
        print(f"| {name} | " + " | ".join(cells) +
              f" | {best / d.get('ms', float('nan')):.2f}x | {d.get('rel_err', float('nan')):.1e} | "
              f"{results['eager'][i]['peak_mib']:.0f} / {d.get('peak_mib', float('nan')):.0f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
