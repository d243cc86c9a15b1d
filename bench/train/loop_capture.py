#!/usr/bin/env python3
"""`dynoc capture train.py` of training loops as scripts write them
(docs/training.md, "The step of a training loop"): the capture's wall time and
peak resident memory against the script's plain run, and the built loop step's
time per call (dynoc.load, Python), each in a process of its own. (Step times
against eager and torch.compile are bench/train/run.py's, docs/perf-train.md.) The programs are test/e2e/test_train_loop_step.py's (a DataLoader of
uint8 images with SGD and with foreach AdamW, an MLP with AdamW and clipping
that logs only at the end, nanoGPT's get_batch, also for 300 steps), at the
sizes given here, and a long loop with no step (LSTM cells trained with LBFGS,
whose every closure call records a forward of 4,000 ops: the capture stops
recording at `--max-ops`, docs/capture.md "Memory").

usage: bench/train/loop_capture.py [--steps N] [--out FILE.md]
Writes a markdown table (stdout, and FILE.md when given).
"""
import argparse
import importlib.util
import json
import os
import pathlib
import platform
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent
DYNOC = ROOT / "bazel-bin" / "tools" / "dynoc" / "dynoc"
_spec = importlib.util.spec_from_file_location(
    "loop_programs", ROOT / "test" / "e2e" / "test_train_loop_step.py")
programs = importlib.util.module_from_spec(_spec)
sys.path.insert(0, str(ROOT / "test" / "e2e"))
_spec.loader.exec_module(programs)

PROGRAMS = {
    "DataLoader, uint8 images, SGD+momentum": programs.DATALOADER_LOOP.replace(
        "OPTIMIZER", programs.SGD).replace("MODEL", programs.MLP),
    "DataLoader, uint8 images, foreach AdamW": programs.DATALOADER_LOOP.replace(
        "OPTIMIZER", "torch.optim.AdamW(model.parameters(), lr=1e-3, foreach=True)").replace(
        "MODEL", programs.MLP),
    "DataLoader, uint8 images, CNN with batch norm": programs.DATALOADER_LOOP.replace(
        "OPTIMIZER", programs.SGD).replace("MODEL", programs.CNN),
    "MLP, AdamW, clip, no break after the step": programs.MERGED_LOOP,
    "nanoGPT get_batch, AdamW": programs.GET_BATCH_LOOP,
    "nanoGPT get_batch, AdamW, 300 steps": programs.GET_BATCH_LOOP.replace(
        "for it in range(30):", "for it in range(300):"),
    "LSTM cells, LBFGS, 15 steps (no step: no LBFGS rule)": '''
import torch, torch.nn as nn
torch.manual_seed(0)
t = torch.arange(120).float().unsqueeze(0) + torch.randint(-4, 4, (16, 1)).float()
wave = torch.sin(t / 20.0)
inp, target = wave[:, :-1], wave[:, 1:]

class Sequence(nn.Module):
    def __init__(self):
        super().__init__()
        self.cell1, self.cell2 = nn.LSTMCell(1, 32), nn.LSTMCell(32, 32)
        self.head = nn.Linear(32, 1)

    def forward(self, seq):
        h1 = c1 = h2 = c2 = torch.zeros(seq.size(0), 32)
        outs = []
        for i in range(seq.size(1)):
            h1, c1 = self.cell1(seq[:, i:i + 1], (h1, c1))
            h2, c2 = self.cell2(h1, (h2, c2))
            outs.append(self.head(h2))
        return torch.cat(outs, dim=1)

model = Sequence()
opt = torch.optim.LBFGS(model.parameters(), lr=0.5, max_iter=10)
for step in range(15):
    def closure():
        opt.zero_grad()
        loss = nn.functional.mse_loss(model(inp), target)
        print("loss", round(loss.item(), 5))
        loss.backward()
        return loss
    opt.step(closure)
''',
}

# Times the built step on inputs of its shapes and dtypes (random: the time,
# not the loss, is what is read).
TIME_BUILT = """
import json, sys, time, torch, dynoc
model = dynoc.load(sys.argv[1])
inputs = json.loads(sys.argv[2])
args = [torch.randint(0, 10, s, dtype=getattr(torch, d)) if d.startswith(("int", "uint"))
        else torch.rand(s, dtype=getattr(torch, d)) for s, d in inputs]
for _ in range(5):
    model(*args)
times = []
for _ in range(int(sys.argv[3])):
    t = time.perf_counter(); model(*args); times.append(time.perf_counter() - t)
times.sort()
print("MEDIAN", times[len(times) // 2])
"""


def timed(cmd, **kw):
    """(wall s, peak resident MiB, stdout) of one process (GNU time)."""
    with tempfile.NamedTemporaryFile("r", suffix=".time") as f:
        t = time.perf_counter()
        p = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", f.name, *map(str, cmd)],
                           capture_output=True, text=True, **kw)
        wall = time.perf_counter() - t
        if p.returncode != 0:
            raise SystemExit(f"{cmd} failed:\n{p.stderr[-2000:]}")
        return wall, int(f.read().strip().splitlines()[-1]) / 1024, p.stdout, p.stderr


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=200, help="timed calls of the built step")
    ap.add_argument("--rounds", type=int, default=3, help="runs of each process (median)")
    ap.add_argument("--out", help="also write the table to this markdown file")
    a = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as d:
        tmp = pathlib.Path(d)
        for name, source in PROGRAMS.items():
            script = tmp / "train.py"
            script.write_text(textwrap.dedent(source))
            plain = [timed([sys.executable, script]) for _ in range(a.rounds)]
            cap = [timed([DYNOC, "capture", script, "-o", tmp / "cap"]) for _ in range(a.rounds)]
            manifest = json.loads((tmp / "cap" / "manifest.json").read_text())
            steps = manifest["steps"]
            built_ms = "no step"
            iterations = ""
            if steps:
                step = steps[0]
                loop = step["loop"]
                iterations = f"{loop['iterations']} ({loop.get('recorded', loop['iterations'])})"
                subprocess.run([DYNOC, "build", tmp / "cap" / f"{step['name']}.mlir", "-o",
                                tmp / "step.so"], check=True, capture_output=True)
                inputs = [(i["shape"], i["dtype"]) for i in step["inputs"] if i["kind"] == "user"]
                runs = []
                for _ in range(a.rounds):
                    out = subprocess.run([sys.executable, "-c", TIME_BUILT, tmp / "step.so",
                                          json.dumps(inputs), str(a.steps)],
                                         capture_output=True, text=True, check=True).stdout
                    runs.append(float(out.split("MEDIAN")[1]) * 1e3)
                built_ms = f"{statistics.median(runs):.3f}"
            med = lambda xs, k: statistics.median(x[k] for x in xs)
            rows.append((name, iterations, med(plain, 0), med(cap, 0), med(plain, 1),
                         med(cap, 1), built_ms))
            print(rows[-1], file=sys.stderr)
    head = (f"`bench/train/loop_capture.py` on {platform.processor() or platform.machine()}, "
            f"{os.cpu_count()} logical cores, {time.strftime('%Y-%m-%d')}: medians of "
            f"{a.rounds} runs; the built step's time is the median of {a.steps} calls "
            "from Python (`dynoc.load`) on random inputs of the step's shapes. A settled "
            "loop's later iterations are counted, not recorded (docs/capture.md, "
            "\"Long loops\").\n\n"
            "| program | iterations (recorded) | plain run (s) | dynoc capture (s) | capture / plain "
            "| plain peak RSS (MiB) | capture peak RSS (MiB) | built step (ms) |\n"
            "|---|---:|---:|---:|---:|---:|---:|---:|\n")
    table = head + "".join(
        f"| {n} | {it} | {p:.2f} | {c:.2f} | {c / p:.2f}x | {pr:.0f} | {cr:.0f} | {b} |\n"
        for n, it, p, c, pr, cr, b in rows)
    print(table)
    if a.out:
        pathlib.Path(a.out).write_text(table)


if __name__ == "__main__":
    main()
