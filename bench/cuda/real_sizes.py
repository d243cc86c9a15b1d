"""Whole models at the sizes people run, on the GPU (issue 51's table): GPT-2
small and a Llama-style decoder (8 layers, width 1024, 16 query and 4
key/value heads) from transformers configs with random weights, bf16, at 1x128
and 8x512 tokens, `model(ids, use_cache=False).logits`. Engines: eager,
torch.compile and torch.compile(mode="reduce-overhead") in one process that
never imports dynoc; dynoc.compile and dynoc.compile(mode="reduce-overhead")
in another. Median of synchronized calls (CUDA events); dynoc's rows check
that built code ran on every timed call and give the relative error of the
logits against eager's in the same dtype. TF32 off.

  python3 bench/cuda/real_sizes.py [--out FILE]   (on the GPU machine, with
                                                   tools/gpu_jit.sh's environment)
"""
import argparse
import json
import os
import subprocess
import sys

CASES = [("gpt2-small", 1, 128), ("gpt2-small", 8, 512),
         ("llama-style", 1, 128), ("llama-style", 8, 512)]
TORCH_ENGINES = ["eager", "torch.compile", "reduce-overhead"]
DYNOC_ENGINES = ["dynoc", "dynoc reduce-overhead"]


def make(name):
    import torch
    import transformers
    torch.manual_seed(0)
    if name == "gpt2-small":
        cfg = transformers.GPT2Config(n_layer=12, n_embd=768, n_head=12, n_positions=1024)
        model = transformers.GPT2LMHeadModel(cfg)
    else:
        cfg = transformers.LlamaConfig(vocab_size=32000, hidden_size=1024,
                                       intermediate_size=2816, num_hidden_layers=8,
                                       num_attention_heads=16, num_key_value_heads=4,
                                       max_position_embeddings=2048)
        model = transformers.LlamaForCausalLM(cfg)
    return model.to("cuda", torch.bfloat16).eval()


def time_calls(fn, ids, iters=20):
    import torch
    times = []
    for _ in range(iters):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn(ids)
        e.record()
        e.synchronize()
        times.append(s.elapsed_time(e))
    times.sort()
    return times[len(times) // 2]


def measure(engines):
    import torch
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    rows = []
    for name, batch, seq in CASES:
        model = make(name)
        torch.manual_seed(1)
        ids = torch.randint(0, 1000, (batch, seq), device="cuda")
        with torch.no_grad():
            want = model(ids, use_cache=False).logits.float()
            for engine in engines:
                row = {"model": name, "batch": batch, "seq": seq, "engine": engine}
                try:
                    if engine == "eager":
                        fn = model
                    elif engine in ("torch.compile", "reduce-overhead"):
                        fn = torch.compile(model, mode=None if engine == "torch.compile"
                                           else "reduce-overhead")
                    else:
                        import dynoc
                        dynoc.reset()
                        fn = dynoc.compile(model, mode="reduce-overhead"
                                           if "reduce" in engine else None)

                    def call(x, fn=fn):
                        return fn(x, use_cache=False).logits
                    for _ in range(3):
                        got = call(ids)
                    torch.cuda.synchronize()
                    if engine.startswith("dynoc"):
                        import dynoc
                        before = dynoc.counters["compiled_calls"]
                    row["ms"] = time_calls(call, ids)
                    if engine.startswith("dynoc"):
                        row["built_calls"] = dynoc.counters["compiled_calls"] - before
                    g = got.float()
                    row["rel_err"] = ((g - want).norm() / want.norm()).item()
                except Exception as e:  # noqa: BLE001 - reported in the table
                    row["error"] = f"{type(e).__name__}: {str(e)[:200]}"
                rows.append(row)
                print(json.dumps(row), flush=True)
        del model
        torch.cuda.empty_cache()
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--engines", help="comma-separated (internal: one process's)")
    ap.add_argument("--out", default=os.path.join(os.environ.get("OUT", "/tmp"),
                                                  "real_sizes.json"))
    args = ap.parse_args()
    if args.engines:
        measure(args.engines.split(","))
        return 0
    rows = []
    for engines in (TORCH_ENGINES, DYNOC_ENGINES):
        p = subprocess.run([sys.executable, __file__, "--engines", ",".join(engines)],
                           capture_output=True, text=True)
        rows += [json.loads(line) for line in p.stdout.splitlines() if line.startswith("{")]
        if p.returncode != 0:
            print(p.stderr[-2000:], file=sys.stderr)
    json.dump(rows, open(args.out, "w"), indent=1)
    import torch
    print(f"GPU: {torch.cuda.get_device_name()} | torch {torch.__version__} | bf16")
    print("| model | batch x seq | " + " | ".join(TORCH_ENGINES + DYNOC_ENGINES) +
          " | dynoc best vs torch best | dynoc rel. error |")
    print("|---|---|" + "---:|" * (len(TORCH_ENGINES) + len(DYNOC_ENGINES) + 2))
    for name, batch, seq in CASES:
        mine = {r["engine"]: r for r in rows if (r["model"], r["batch"], r["seq"]) ==
                (name, batch, seq)}
        cell = lambda e: (f"{mine[e]['ms']:.2f}" if "ms" in mine.get(e, {}) else  # noqa: E731
                          mine.get(e, {}).get("error", "-")[:60])
        torch_best = min((mine[e]["ms"] for e in TORCH_ENGINES if "ms" in mine.get(e, {})),
                         default=float("nan"))
        dynoc_best = min((mine[e]["ms"] for e in DYNOC_ENGINES if "ms" in mine.get(e, {})),
                         default=float("nan"))
        err = mine.get("dynoc", {}).get("rel_err", float("nan"))
        print(f"| {name} | {batch}x{seq} | " +
              " | ".join(cell(e) for e in TORCH_ENGINES + DYNOC_ENGINES) +
              f" | {torch_best / dynoc_best:.2f}x | {err:.1e} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
