"""A script's training loop is recorded until it settles, then counted (issue
47, docs/capture.md "Long loops"): the step model comes from the recorded
iterations, the report counts them all, and what the script does after the
loop (or differently within it) is recorded again."""
import json
import subprocess
import sys
import textwrap

import numpy as np

# 300 steps that print every 50th loss, then an evaluation the loop never ran
# (a sigmoid): recording must resume for it.
LOOP_THEN_EVAL = """
import json, sys
import torch, torch.nn as nn
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1))
opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
x, y = torch.randn(64, 16), torch.randn(64, 1)

def step(x, y):
    opt.zero_grad()
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    opt.step()
    return loss

for it in range(300):
    loss = step(x, y)
    if it % 50 == 0:
        print(it, f"{loss.item():.5f}")
with torch.no_grad():
    print("eval", f"{torch.sigmoid(model(x)).sum().item():.4f}")
if "--continue" in sys.argv:  # eager's next steps, for the test
    g = torch.Generator().manual_seed(3)
    batches = [(torch.randn(64, 16, generator=g), torch.randn(64, 1, generator=g))
               for _ in range(5)]
    print(json.dumps([step(a, b).item() for a, b in batches]))
"""


def _script(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(textwrap.dedent(LOOP_THEN_EVAL))
    return script


def _capture(dynoc, script, cap, *flags):
    p = dynoc("capture", script, "-o", cap, *flags, check=True)
    return p, json.loads((cap / "manifest.json").read_text())


def test_a_settled_loop_is_counted_and_its_step_trains_like_eager(dynoc, tmp_path):
    import dynoc as dynoc_py
    import torch
    script = _script(tmp_path)
    plain = subprocess.run([sys.executable, script], capture_output=True, text=True,
                           check=True)
    p, manifest = _capture(dynoc, script, tmp_path / "cap")
    assert p.stdout == plain.stdout  # the unrecorded iterations ran as plainly
    [step] = manifest["steps"]
    loop = step["loop"]
    # every iteration counted, a few recorded (the first ones, and those
    # around the prints until the loop settles on the fifty-step block)
    assert loop["iterations"] == 300, loop
    assert loop["recorded"] < 60, loop
    assert f"300 iterations, {loop['recorded']} recorded and the rest counted" in p.stderr
    # the report's break counts are the script's, recorded or not
    backward = [b for b in manifest["breaks"] if "autograd backward pass" in b["reason"]]
    assert len(backward) == 300
    # what the loop never ran is recorded: the evaluation after it
    assert any("aten.sigmoid" in g["ops"] for g in manifest["graphs"]), \
        [g["ops"] for g in manifest["graphs"]]
    assert any("recording resumes after a settled loop's iterations" in b["reason"]
               for b in manifest["breaks"])
    # the step built from the recorded iterations continues as eager does
    dynoc("build", tmp_path / "cap" / "step_0.mlir", "-o", tmp_path / "step.so", check=True)
    out = subprocess.run([sys.executable, script, "--continue"], capture_output=True,
                         text=True, check=True).stdout
    want = np.array(json.loads(out.strip().splitlines()[-1]))
    built = dynoc_py.load(tmp_path / "step.so")
    g = torch.Generator().manual_seed(3)
    batches = [(torch.randn(64, 16, generator=g), torch.randn(64, 1, generator=g))
               for _ in range(5)]
    got = np.array([float(built(a, b)) for a, b in batches])
    np.testing.assert_allclose(got, want, rtol=1e-5)


def test_record_all_iterations_records_every_iteration(dynoc, tmp_path):
    script = _script(tmp_path)
    p, manifest = _capture(dynoc, script, tmp_path / "cap", "--record-all-iterations")
    [step] = manifest["steps"]
    assert step["loop"]["iterations"] == step["loop"]["recorded"] == 300, step["loop"]
    assert "300 iterations recorded" in p.stderr
    assert not any("settled loop" in b["reason"] for b in manifest["breaks"])
