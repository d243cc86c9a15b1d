"""The step of a training loop on the GPU (docs/training.md, "The step of a
training loop"): a script whose `main()` trains a CUDA model over a CPU
DataLoader (batches moved with `.to(device, non_blocking=True)`), captured
with `dynoc capture` here, its step built with `dynoc build --target=cuda`,
then 10 more calls of the built step against eager's next 10 losses.
Run by `tools/gpu_jit.sh test test/gpu/test_loop_step_cuda.py` (DYNOC_BIN);
skips where no GPU is present (CI)."""
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch

pytestmark = pytest.mark.skipif(not torch.cuda.is_available() or "DYNOC_BIN" not in os.environ,
                                reason="no CUDA GPU here (tools/gpu_jit.sh runs this)")

PROGRAM = """
import sys
import torch, torch.nn as nn, torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

torch.backends.cuda.matmul.allow_tf32 = False

def more_batches(n):
    g = torch.Generator().manual_seed(5)
    return [(torch.randint(0, 256, (64, 1, 28, 28), dtype=torch.uint8, generator=g),
             torch.randint(0, 10, (64,), generator=g)) for _ in range(n)]

def train_on(model, opt, x, y):
    x, y = x.to("cuda", non_blocking=True), y.to("cuda", non_blocking=True)
    opt.zero_grad(set_to_none=True)
    loss = F.cross_entropy(model(x.float() / 255.0), y)
    loss.backward()
    opt.step()
    return loss

def main():
    torch.manual_seed(0)
    images = torch.randint(0, 256, (512, 1, 28, 28), dtype=torch.uint8)
    labels = torch.randint(0, 10, (512,))
    loader = DataLoader(TensorDataset(images, labels), batch_size=64, shuffle=True)
    model = nn.Sequential(nn.Flatten(), nn.Linear(784, 256), nn.GELU(), nn.Linear(256, 10)).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    for epoch in range(2):
        total = 0.0
        for x, y in loader:
            total += train_on(model, opt, x, y).item()
        print(epoch, f"{total:.3f}")
    if "--continue" in sys.argv:
        print([train_on(model, opt, x, y).item() for x, y in more_batches(10)])

main()
"""


def test_dataloader_loop_step_builds_for_cuda_and_trains_like_eager(tmp_path):
    import dynoc
    dynoc_bin = os.environ["DYNOC_BIN"]
    script = tmp_path / "train.py"
    script.write_text(textwrap.dedent(PROGRAM))
    plain = subprocess.run([sys.executable, script], capture_output=True, text=True, check=True)
    cap = tmp_path / "cap"
    # the staged binary has no runfiles: the package and extension by path
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, DYNOC_PYTHON=sys.executable, DYNOC_CAPTURE_PATH=os.pathsep.join(
        [os.path.join(root, "python"), os.environ.get("PYTHONPATH", "")]))
    p = subprocess.run([dynoc_bin, "capture", script, "-o", cap], capture_output=True,
                       text=True, env=env)
    assert p.returncode == 0, p.stderr
    assert p.stdout == plain.stdout
    [step] = json.loads((cap / "manifest.json").read_text())["steps"]
    print("\n" + [line for line in p.stderr.splitlines() if "training step" in line][0])
    assert step["loop"]["iterations"] >= 14, step["loop"]  # of 16 (the first may differ)
    b = subprocess.run([dynoc_bin, "build", "--target=cuda", cap / "step_0.mlir", "-o",
                        tmp_path / "step.so"], capture_output=True, text=True)
    assert b.returncode == 0, b.stderr
    out = subprocess.run([sys.executable, script, "--continue"], capture_output=True,
                         text=True, check=True).stdout
    want = np.array(json.loads(out.strip().splitlines()[-1]))
    model = dynoc.load(tmp_path / "step.so")
    g = torch.Generator().manual_seed(5)
    batches = [(torch.randint(0, 256, (64, 1, 28, 28), dtype=torch.uint8, generator=g),
                torch.randint(0, 10, (64,), generator=g)) for _ in range(10)]
    got = np.array([float(model(x.cuda(), y.cuda())) for x, y in batches])
    print("dynoc step:", got.round(5).tolist(), "\neager:     ", want.round(5).tolist())
    np.testing.assert_allclose(got, want, rtol=1e-4)
