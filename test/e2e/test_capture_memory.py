"""The capture of a long loop stays bounded (issue 47, docs/capture.md
"Memory"): the recording does not keep tensors the script dropped, and a
script captured whole stops recording at `dynoc capture --max-ops` and runs on
unrecorded, with its own output."""
import json
import re
import subprocess
import sys
import textwrap

# Each iteration makes four 4 MiB tensors and drops them; a recording that
# kept every tensor it saw would hold 2 GiB by the end.
DROPPED_TENSORS = """
import resource, sys
import torch
torch.manual_seed(0)
w = torch.randn(1024, 1024)
total = 0.0
for i in range(128):
    x = torch.randn(1024, 1024)
    y = (x * 2.0).relu() @ w
    total += y.mean().item()
print(f"{total:.3f}")
with open(sys.argv[1], "w") as f:
    f.write(str(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss))
"""

# A module-level training loop of 300 steps, each logged by loss.item().
LONG_TRAINING = """
import torch, torch.nn as nn
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.05)
x, y = torch.randn(64, 16), torch.randn(64, 1)
for step in range(300):
    opt.zero_grad()
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    opt.step()
    if step % 50 == 0:
        print(step, f"{loss.item():.5f}")
print("final", f"{loss.item():.5f}")
"""


def _write(tmp_path, source):
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent(source))
    return script


def test_capture_does_not_keep_the_tensors_a_loop_drops(dynoc, tmp_path):
    script = _write(tmp_path, DROPPED_TENSORS)
    plain = subprocess.run([sys.executable, script, tmp_path / "plain_rss"],
                           capture_output=True, text=True, check=True)
    p = dynoc("capture", script, "-o", tmp_path / "cap", "--max-ops", "0", "--",
              tmp_path / "capture_rss", check=True)
    assert p.stdout == plain.stdout
    plain_kib = int((tmp_path / "plain_rss").read_text())
    capture_kib = int((tmp_path / "capture_rss").read_text())
    # dynoc's own modules and the recorded graphs: well under the 2 GiB the
    # iterations' tensors would take
    assert capture_kib - plain_kib < 512 * 1024, (plain_kib, capture_kib)
    # the iterations still fold (the first and the last differ in what flows in or out)
    runs = re.search(r"runs (\d+) times", p.stderr)
    assert runs and int(runs.group(1)) >= 120, p.stderr


def test_recording_stops_at_the_op_budget_and_the_loop_step_is_kept(dynoc, tmp_path):
    script = _write(tmp_path, LONG_TRAINING)
    plain = subprocess.run([sys.executable, script], capture_output=True, text=True,
                           check=True)
    cap = tmp_path / "cap"
    p = dynoc("capture", script, "-o", cap, "--max-ops", "1500", "--record-all-iterations",
              check=True)
    assert p.stdout == plain.stdout  # the unrecorded steps ran as plainly
    stopped = re.search(r"recording stopped after (\d+) recorded ops, the capture's budget "
                        r"\(dynoc capture --max-ops 1500\)", p.stderr)
    assert stopped, p.stderr
    # said when it happens (a long run's user sees it before the report)
    assert "[dynoc capture] " in p.stderr.split("dynoc capture report")[0]
    # stopped at the first graph's end past the budget
    assert 1500 <= int(stopped.group(1)) < 1700
    manifest = json.loads((cap / "manifest.json").read_text())
    [step] = manifest["steps"]  # the recorded iterations still give the loop's step
    assert 2 <= step["loop"]["iterations"] < 300, step["loop"]
