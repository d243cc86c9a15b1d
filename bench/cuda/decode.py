"""LLM decoding at batch 1 on one GPU (issue 51): transformers' generate()
with a static KV cache, greedy, on a Llama-style decoder of about 1B
parameters in bf16 (random weights from a config), as its documentation
compiles it: the model's forward compiled with mode="reduce-overhead".

Each engine runs in a process of its own (torch's engines never import
dynoc): eager, torch.compile (generate() compiles the forward itself, as transformers does for a static
cache on a GPU: fullgraph, CUDA graphs) and dynoc.compile
(CUDA graphs). Prints one markdown table row per engine: decode tokens per
second (the new tokens after the first, over their wall time, synchronized),
and the tokens' agreement with eager's.

  python3 bench/cuda/decode.py [--layers 16] [--prompt 128] [--new 128]
  (on the GPU machine: dynoc's engine needs tools/gpu_jit.sh's environment)
"""
import argparse
import json
import os
import subprocess
import sys
import time


def build_model(a):
    import torch
    import transformers
    cfg = transformers.LlamaConfig(vocab_size=32000, hidden_size=a.hidden,
                                   intermediate_size=a.hidden * 11 // 4,
                                   num_hidden_layers=a.layers, num_attention_heads=a.hidden // 64,
                                   num_key_value_heads=a.hidden // 256,
                                   max_position_embeddings=a.prompt + a.new + 8)
    torch.manual_seed(0)
    dtype = {"bf16": torch.bfloat16, "f32": torch.float32}[a.dtype]
    return transformers.LlamaForCausalLM(cfg).to("cuda", dtype).eval()


def run_engine(a):
    """One engine, in this process: JSON with tokens/s and the tokens."""
    import torch
    model = build_model(a)
    params = sum(p.numel() for p in model.parameters())
    # torch: generate() compiles the forward itself for a static cache on a GPU
    # (its compile_config: fullgraph, CUDA graphs), as transformers documents.
    if a.engine == "dynoc":
        import dynoc
        model.forward = dynoc.compile(model.forward, mode="reduce-overhead")
    torch.manual_seed(1)
    prompt = torch.randint(0, 32000, (1, a.prompt), device="cuda")

    def generate(n):
        return model.generate(prompt, max_new_tokens=n, min_new_tokens=n, do_sample=False,
                              cache_implementation="static",
                              disable_compile=a.engine != "torch")

    with torch.no_grad():
        for _ in range(2):  # capture, build, warm CUDA graphs
            generate(a.new)
        times = []
        for _ in range(a.repeats):
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            first = generate(1)  # prefill and the first token
            torch.cuda.synchronize()
            t1 = time.perf_counter()
            out = generate(a.new)
            torch.cuda.synchronize()
            t2 = time.perf_counter()
            # Decode time: the whole run less a run that only prefills.
            times.append((t2 - t1) - (t1 - t0))
    times.sort()
    extra = {}
    if a.engine == "dynoc":
        import dynoc
        extra = dict(dynoc.counters)
    return {"engine": a.engine, "params": params,
            "tokens_per_s": (a.new - 1) / times[len(times) // 2],
            "tokens": out[0, a.prompt:].tolist(), "counters": extra,
            "first": first.shape[1]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--layers", type=int, default=16)
    ap.add_argument("--hidden", type=int, default=2048)
    ap.add_argument("--prompt", type=int, default=128)
    ap.add_argument("--new", type=int, default=128)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--dtype", choices=["bf16", "f32"], default="bf16")
    ap.add_argument("--engine", choices=["eager", "torch", "dynoc"])
    ap.add_argument("--engines", default="eager,torch,dynoc")
    a = ap.parse_args()
    if a.engine:
        print("RESULT " + json.dumps(run_engine(a)))
        return 0
    results = {}
    for engine in a.engines.split(","):
        cmd = [sys.executable, __file__, "--engine", engine] + \
              [f"--{k}={getattr(a, k)}" for k in ("layers", "hidden", "prompt", "new", "repeats", "dtype")]
        p = subprocess.run(cmd, capture_output=True, text=True, env=os.environ)
        line = [ln for ln in p.stdout.splitlines() if ln.startswith("RESULT ")]
        if p.returncode or not line:
            print(f"| {engine} | failed (exit {p.returncode}): {p.stderr[-400:]!r} |")
            continue
        results[engine] = json.loads(line[0][7:])
    import torch
    eager = results.get("eager", {}).get("tokens")
    name = torch.cuda.get_device_name()
    params = next(iter(results.values()))["params"] / 1e9 if results else 0
    print(f"\n{name}, torch {torch.__version__}, Llama-style {params:.2f}B {a.dtype}, batch 1, "
          f"prompt {a.prompt}, {a.new} new tokens, static cache, greedy\n")
    print("| engine | decode tokens/s | vs eager | tokens equal to eager's | dynoc counters |")
    print("|---|---:|---:|---:|---|")
    base = results.get("eager", {}).get("tokens_per_s")
    for engine, r in results.items():
        same = sum(x == y for x, y in zip(r["tokens"], eager)) if eager else 0
        ratio = f"{r['tokens_per_s'] / base:.2f}x" if base else "-"
        counters = ", ".join(f"{k} {v}" for k, v in r["counters"].items()) or "-"
        print(f"| {engine} | {r['tokens_per_s']:.1f} | {ratio} | {same}/{len(r['tokens'])} | "
              f"{counters} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
