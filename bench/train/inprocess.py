"""A whole training step compiled in process (docs/training.md, "In the same
process: the whole step"): `train_step` (forward, `loss.backward()`,
`clip_grad_norm_`, AdamW's step, `zero_grad`) as torch.compile's recipe
writes it, on transformers' GPT-2 from a config (random weights, dropout off),
timed per engine, each engine in a process of its own (torch's never imports
dynoc):

  eager, torch.compile (Inductor), dynoc.compile.

Median of synchronized steps after warm-up; the dynoc row also says how many
timed steps ran built code (dynoc.counters), and every row prints its first
losses (the same seed and batches: eager's and dynoc's agree to rounding).

Usage: python bench/train/inprocess.py [--device cuda] [--size small|tiny]
       [--batch 8] [--seq 512] [--steps 20] [--engines eager,torch,dynoc]
       [--profile] [--out FILE]
"""
import argparse
import json
import os
import subprocess
import sys

ENGINE = r'''
import json, statistics, sys, time
import torch
engine, device, size, batch, seq, steps, profile = sys.argv[1:8]
batch, seq, steps = int(batch), int(seq), int(steps)
torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
from transformers import GPT2Config, GPT2LMHeadModel
shape = {"small": dict(n_layer=12, n_embd=768, n_head=12),
         "tiny": dict(n_layer=2, n_embd=128, n_head=4)}[size]
cfg = GPT2Config(**shape, n_positions=max(seq, 128), resid_pdrop=0.0, embd_pdrop=0.0,
                 attn_pdrop=0.0, attn_implementation="sdpa", use_cache=False)
torch.manual_seed(0)
model = GPT2LMHeadModel(cfg).to(device).train()
opt = torch.optim.AdamW(model.parameters(), lr=1e-4)

def train_step(ids):
    loss = model(input_ids=ids, labels=ids).loss
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    opt.zero_grad(set_to_none=True)
    return loss.detach()

if engine == "dynoc":
    import dynoc
    from dynoc.jit import built
    step = dynoc.compile(train_step)
elif engine == "torch":
    step = torch.compile(train_step)
else:
    step = train_step
g = torch.Generator().manual_seed(1)
batches = [torch.randint(0, cfg.vocab_size, (batch, seq), generator=g).to(device)
           for _ in range(4)]
sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
losses = []
t0 = time.perf_counter()
for i in range(3):  # warm-up: capture/compile, the optimizer's state appears
    losses.append(float(step(batches[i % 4])))
sync()
warm = time.perf_counter() - t0
before = built.counters["compiled_calls"] if engine == "dynoc" else 0
times = []
for i in range(steps):
    sync()
    t = time.perf_counter()
    out = step(batches[i % 4])
    sync()
    times.append(time.perf_counter() - t)
    if len(losses) < 6:
        losses.append(float(out))
compiled = built.counters["compiled_calls"] - before if engine == "dynoc" else None
if profile == "1":  # GPU kernels of 3 steps summed by name, the largest first
    import collections
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        for i in range(3):
            step(batches[i % 4])
        sync()
    total, by_name = 0.0, collections.Counter()
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA:
            by_name[e.name[:90]] += e.device_time_total / 1e3 / 3
            total += e.device_time_total / 1e3 / 3
    print(f"# GPU time per step {total:.2f} ms", file=sys.stderr)
    for name, ms in by_name.most_common(15):
        print(f"#  {ms:8.3f} ms {100 * ms / total:5.1f}%  {name}", file=sys.stderr)
print(json.dumps({"engine": engine, "ms": statistics.median(times) * 1e3, "warm_s": warm,
                  "compiled": compiled, "losses": losses}))
'''


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--size", default="tiny", choices=("tiny", "small"))
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--seq", type=int, default=128)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--engines", default="eager,torch,dynoc")
    ap.add_argument("--out", help="append the rows as JSON lines here")
    ap.add_argument("--profile", action="store_true",
                    help="also print each engine's largest GPU kernels per step")
    a = ap.parse_args()
    rows = []
    for engine in a.engines.split(","):
        p = subprocess.run([sys.executable, "-c", ENGINE, engine, a.device, a.size, str(a.batch),
                            str(a.seq), str(a.steps), str(int(a.profile))],
                           capture_output=True, text=True)
        if p.returncode != 0:
            print(f"{engine}: failed: {p.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
            continue
        row = json.loads(p.stdout.strip().splitlines()[-1])
        rows.append(row)
        warnings = [ln for ln in p.stderr.splitlines() if "dynoc:" in ln]
        for ln in p.stderr.splitlines():
            if ln.startswith("#"):
                print(f"{engine}: {ln[1:]}")
        print(f"{engine:6s} {row['ms']:9.2f} ms/step  warm-up {row['warm_s']:.1f} s  "
              f"built calls {row['compiled']}  losses {[round(x, 4) for x in row['losses']]}"
              + (f"  {warnings[:2]}" if warnings else ""))
    eager = next((r["ms"] for r in rows if r["engine"] == "eager"), None)
    torch_ms = next((r["ms"] for r in rows if r["engine"] == "torch"), None)
    for r in rows:
        if r["engine"] == "dynoc":
            print(f"dynoc vs eager {eager / r['ms']:.2f}x" if eager else "",
                  f"vs torch.compile {torch_ms / r['ms']:.2f}x" if torch_ms else "")
    if a.out:
        with open(a.out, "a") as f:
            for r in rows:
                f.write(json.dumps(dict(r, device=a.device, size=a.size, batch=a.batch,
                                        seq=a.seq)) + "\n")


if __name__ == "__main__":
    main()
