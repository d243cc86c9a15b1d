"""One training step (forward, backward, optimizer update) at batch 32:
PyTorch eager vs torch.compile (Inductor) vs dynoc's step model from Python
(dynoc.load) vs from C++ (examples/train, libdynrt alone). Writes
docs/perf-train.md.

    .venv/bin/python bench/train/run.py [--steps 200] [--out docs/perf-train.md]

Each engine runs in a process of its own (so each has its own peak RSS), on the
same threads (OMP_NUM_THREADS = the machine's cores), from the same seeded model
and batch: 3 steps first (dynoc captures those; Inductor compiles at the first),
then `--steps` timed steps; the median step time, the loss after the last step (the
engines must agree) and the process's peak RSS are reported. Models: an MLP
regressor (MSE) with SGD and momentum, and with AdamW; an MLP classifier
(cross-entropy); a CNN (convolutions, BatchNorm2d in train mode, max pooling) on
32x32 images; examples/train/gpt.py's character-level GPT (layer norms, causal
attention, GELU, embeddings) with AdamW, on 32 windows of its corpus.
"""
import argparse
import datetime
import json
import os
import pathlib
import resource
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT / "bench"))
from runtime_overhead import machine  # noqa: E402

DYNOC = ROOT / "bazel-bin/tools/dynoc/dynoc"
TRAIN_BIN = ROOT / "bazel-bin/examples/train/train"
WARM = 3  # steps before timing: dynoc's capture, Inductor's compile

SGD = "torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)"
ADAMW = "torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)"
MLP_REGRESSION = """model = nn.Sequential(nn.Linear(64, 512), nn.ReLU(), nn.Linear(512, 512),
                      nn.ReLU(), nn.Linear(512, 1))
x = torch.randn(32, 64)
y = x[:, :1] * 2 + torch.sin(x[:, 1:2])"""
# name: (setup making model, x, y; the loss; the optimizer)
MODELS = {
    "mlp_regression": (MLP_REGRESSION, "nn.functional.mse_loss(model(x), y)", SGD),
    "mlp_regression_adamw": (MLP_REGRESSION, "nn.functional.mse_loss(model(x), y)", ADAMW),
    "mlp_classifier": ("""model = nn.Sequential(nn.Linear(64, 512), nn.Tanh(), nn.Linear(512, 512),
                      nn.Tanh(), nn.Linear(512, 10))
x = torch.randn(32, 64)
y = torch.randint(0, 10, (32,))""", "nn.functional.cross_entropy(model(x), y)", SGD),
    "cnn_batchnorm": ("""model = nn.Sequential(
    nn.Conv2d(3, 16, 3, padding=1, bias=False), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
    nn.Conv2d(16, 32, 3, padding=1, bias=False), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
    nn.Flatten(), nn.Linear(32 * 8 * 8, 10))
x = torch.randn(32, 3, 32, 32)
y = torch.randint(0, 10, (32,))""", "nn.functional.cross_entropy(model(x), y)", SGD),
    "tiny_gpt_adamw": (f"""sys.path.insert(0, {str(ROOT / "examples" / "train")!r})
from gpt import CORPUS, TinyGPT, batch
text = open(CORPUS).read()
vocab = sorted(set(text))
x, y = batch(text, vocab, count=32)
model = TinyGPT(len(vocab))""", "nn.functional.cross_entropy(model(x).view(-1, len(vocab)), y.view(-1))",
                       ADAMW),
}

SCRIPT = """
import json, sys, time
import numpy as np
import torch
import torch.nn as nn
torch.manual_seed(0)
{setup}
opt = {optimizer}

def train_step(x, y):
    opt.zero_grad()
    loss = {loss}
    loss.backward()
    opt.step()
    return loss

engine, steps, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
step = torch.compile(train_step) if engine in ("capture", "inductor") else train_step
t0 = time.perf_counter()
step(x, y)
first = time.perf_counter() - t0
for _ in range({warm} - 1):
    step(x, y)
if engine == "capture":
    np.save(out + ".x.npy", x.numpy()); np.save(out + ".y.npy", y.numpy())
    # The state the step model starts from, for engines on other devices
    # (bench/train/gpu.py).
    torch.save({{"model": model.state_dict(), "opt": opt.state_dict()}}, out + ".state.pt")
    sys.exit(0)
times = []
for _ in range(steps):
    t0 = time.perf_counter()
    loss = step(x, y)
    times.append(time.perf_counter() - t0)
json.dump({{"first": first, "times": times, "loss": float(loss)}}, open(out, "w"))
"""

DYNOC_WORKER = """
import json, sys, time
import numpy as np
import torch
import dynoc
so, xs, ys, steps, out = sys.argv[1:6]
x, y = torch.from_numpy(np.load(xs)), torch.from_numpy(np.load(ys))
model = dynoc.load(so)
times = []
for _ in range(int(steps)):
    t0 = time.perf_counter()
    loss = model(x, y)
    times.append(time.perf_counter() - t0)
json.dump({"times": times, "loss": float(loss)}, open(out, "w"))
"""


def measured(argv, env):
    """Runs argv in a child of its own; returns (its stdout, its peak RSS in MiB)."""
    wrapper = [sys.executable, "-c",
               "import resource, subprocess, sys; p = subprocess.run(sys.argv[1:]); "
               "print('PEAK_RSS_KB', resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, "
               "file=sys.stderr); sys.exit(p.returncode)"]
    p = subprocess.run(wrapper + [str(a) for a in argv], capture_output=True, text=True, env=env)
    if p.returncode != 0:
        raise RuntimeError(f"{argv[:3]} failed:\n{p.stdout[-2000:]}\n{p.stderr[-3000:]}")
    kb = next(int(l.split()[1]) for l in p.stderr.splitlines() if l.startswith("PEAK_RSS_KB"))
    return p.stdout, kb / 1024


def bench_model(name, steps, work, env, rounds):
    """The engines' step times for `name`: `rounds` rounds, each running every
    engine's process once (interleaved, so that a slow spell of the machine
    falls on all of them), steps/rounds timed steps each; the median over all
    timed steps, the largest peak RSS, the loss after the last round."""
    setup, loss, optimizer = MODELS[name]
    script = work / f"{name}.py"
    script.write_text(SCRIPT.format(setup=setup, loss=loss, optimizer=optimizer, warm=WARM))
    cap = work / f"{name}.cap"
    data = work / f"{name}.data"
    subprocess.run([DYNOC, "capture", "-o", cap, script, "capture", "0", data], check=True,
                   capture_output=True, env=env)
    so = work / f"{name}.so"
    t0 = time.perf_counter()
    subprocess.run([DYNOC, "build", cap / "step_1.mlir", "-o", so], check=True,
                   capture_output=True, env=env)
    build_s = time.perf_counter() - t0
    worker = work / "dynoc_worker.py"
    worker.write_text(DYNOC_WORKER)
    per_round = max(1, steps // rounds)
    engines = ("eager", "inductor", "dynoc (Python)", "dynoc (C++)")
    times = {e: [] for e in engines}
    rows = {e: {"rss": 0.0} for e in engines}
    for _ in range(rounds):
        for engine in ("eager", "inductor"):
            out = work / f"{name}.{engine}.json"
            _, rss = measured([sys.executable, script, engine, per_round, out], env)
            r = json.loads(out.read_text())
            times[engine] += r["times"]
            rows[engine].update(loss=r["loss"], rss=max(rows[engine]["rss"], rss),
                                first_s=r["first"])
        out = work / f"{name}.dynoc.json"
        _, rss = measured([sys.executable, worker, so, f"{data}.x.npy", f"{data}.y.npy",
                           per_round, out], env)
        r = json.loads(out.read_text())
        times["dynoc (Python)"] += r["times"]
        rows["dynoc (Python)"].update(loss=r["loss"], first_s=build_s,
                                      rss=max(rows["dynoc (Python)"]["rss"], rss))
        stdout, rss = measured([TRAIN_BIN, so, f"{data}.x.npy", f"{data}.y.npy", per_round,
                                "--step-times"], env)
        losses = [float(l.split()[-1]) for l in stdout.splitlines() if " loss " in l]
        times["dynoc (C++)"] += [float(l.split()[-1]) * 1e-6 for l in stdout.splitlines()
                                 if l.startswith("step time us")]
        rows["dynoc (C++)"].update(loss=losses[-1], first_s=build_s,
                                   rss=max(rows["dynoc (C++)"]["rss"], rss))
    for e in engines:
        rows[e]["step_ms"] = statistics.median(times[e]) * 1e3
    return rows


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=4,
                        help="interleaved rounds of the engines' processes")
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--out", default=str(ROOT / "docs/perf-train.md"))
    args = parser.parse_args()
    env = dict(os.environ, OMP_NUM_THREADS=str(os.cpu_count()),
               PYTHONPATH=os.pathsep.join([str(ROOT / "python"),
                                           os.environ.get("PYTHONPATH", "")]))
    lines = [f"# Training step performance (CPU)", "",
             f"Measured {datetime.date.today()} by `bench/train/run.py` on {machine()}; "
             f"batch 32, {args.steps} timed steps after {WARM} (median step time) in "
             f"{args.rounds} interleaved rounds of each engine's process, "
             "SGD with momentum or AdamW as each model's name says, "
             f"OMP_NUM_THREADS={os.cpu_count()}, each engine in its own process. "
             "`compile / build` is Inductor's first call (compile and one step) and "
             "`dynoc build step_1.mlir`. The loss is after the last step; the engines "
             "start from the same seeded model and batch.", ""]
    ratios_eager, ratios_inductor = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.models.split(","):
            print(f"[bench/train] {name}", file=sys.stderr)
            rows = bench_model(name, args.steps, pathlib.Path(tmp), env, args.rounds)
            eager, ind = rows["eager"]["step_ms"], rows["inductor"]["step_ms"]
            lines += [f"## {name}", "",
                      "| engine | step (ms) | vs eager | vs Inductor | loss after the last step "
                      "| peak RSS (MiB) | compile / build (s) |",
                      "|---|---:|---:|---:|---:|---:|---:|"]
            for engine, r in rows.items():
                first = "" if engine == "eager" else f"{r['first_s']:.2f}"
                lines.append(f"| {engine} | {r['step_ms']:.3f} | {eager / r['step_ms']:.2f}x "
                             f"| {ind / r['step_ms']:.2f}x | {r['loss']:.7g} | {r['rss']:.0f} "
                             f"| {first} |")
            lines.append("")
            ratios_eager.append(eager / rows["dynoc (C++)"]["step_ms"])
            ratios_inductor.append(ind / rows["dynoc (C++)"]["step_ms"])
    geo = lambda xs: statistics.geometric_mean(xs)  # noqa: E731
    lines += [f"Geomean, dynoc from C++: {geo(ratios_eager):.2f}x eager, "
              f"{geo(ratios_inductor):.2f}x Inductor (targets: 1.3x and 1.1x).", ""]
    pathlib.Path(args.out).write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
