"""The training step graph (docs/training.md): a compiled train step's forward,
backward and update graphs stitched into `step_N.mlir`; built, each call of the
model is one training step, from Python (dynoc.load) and from C++ (libdynrt
alone, examples/train), with a loss curve matching eager's."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
TRAIN_PY = os.path.join(ROOT, "examples", "train", "train.py")
TRAIN_BIN = os.path.join(ROOT, "bazel-bin", "examples", "train", "train")
CAPTURED_STEPS, MORE_STEPS = 3, 20


def eager_losses(tmp_path, script, steps, losses_from):
    out = tmp_path / f"eager_{steps}.npy"
    subprocess.run([sys.executable, str(script), "--steps", str(steps), "--losses-from",
                    str(losses_from), "--save-losses", str(out)], check=True,
                   capture_output=True)
    return np.load(out)


@pytest.fixture
def train_so(dynoc, tmp_path):
    """examples/train/train.py captured (3 steps) and its steady-state step built."""
    cap = tmp_path / "cap"
    p = dynoc("capture", TRAIN_PY, "-o", cap, "--", "--save-data", cap / "data", check=True)
    manifest = json.loads((cap / "manifest.json").read_text())
    # the first step creates the momentum buffers (a variant of its own); the
    # second is the steady state, written back: parameters and buffers
    assert [s["name"] for s in manifest["steps"]] == ["step_0", "step_1"], p.stderr
    step = manifest["steps"][1]
    written = {m["input"] for m in step["mutations"]}
    assert sum("momentum_buffer" in w for w in written) == 4, written
    assert "training step step_1" in p.stderr
    dynoc("build", cap / "step_1.mlir", "-o", tmp_path / "train.so", check=True)
    return tmp_path / "train.so", cap / "data"


def test_step_model_trains_like_eager_from_python(train_so, tmp_path):
    import dynoc
    import torch
    so, data = train_so
    want = eager_losses(tmp_path, TRAIN_PY, CAPTURED_STEPS + MORE_STEPS, CAPTURED_STEPS)
    x = torch.from_numpy(np.load(data / "x.npy"))
    y = torch.from_numpy(np.load(data / "y.npy"))
    model = dynoc.load(so)
    got = np.array([float(model(x, y)) for _ in range(MORE_STEPS)])
    np.testing.assert_allclose(got, want, rtol=1e-5)
    assert got[-1] < got[0]  # it trains


def test_step_model_trains_like_eager_from_cpp(train_so, tmp_path):
    so, data = train_so
    np.save(tmp_path / "want.npy", eager_losses(tmp_path, TRAIN_PY,
                                                CAPTURED_STEPS + MORE_STEPS, CAPTURED_STEPS))
    p = subprocess.run([TRAIN_BIN, str(so), str(data / "x.npy"), str(data / "y.npy"),
                        str(MORE_STEPS), str(tmp_path / "want.npy")],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.stdout.count(" loss ") == MORE_STEPS
    assert "MATCH (<= 1e-5)" in p.stdout


def test_cpp_loop_reports_bad_arguments(train_so, tmp_path):
    so, data = train_so
    p = subprocess.run([TRAIN_BIN, str(so), str(data / "x.npy"), str(tmp_path / "nope.npy")],
                       capture_output=True, text=True)
    assert p.returncode == 1 and "nope.npy" in p.stderr
    p = subprocess.run([TRAIN_BIN, str(so), str(data / "x.npy"), str(data / "y.npy"), "zero"],
                       capture_output=True, text=True)
    assert p.returncode == 2 and "STEPS must be a positive integer" in p.stderr


ADAMW = """
import torch
torch.manual_seed(0)
model = torch.nn.Linear(4, 1)
opt = torch.optim.AdamW(model.parameters(), lr=0.01)
x, y = torch.randn(8, 4), torch.randn(8, 1)

@torch.compile
def step(x, y):
    opt.zero_grad()
    loss = torch.nn.functional.mse_loss(model(x), y)
    loss.backward()
    opt.step()
    return loss

for _ in range(3):
    print(f"{step(x, y).item():.5f}")
"""


def test_adamw_is_no_step_graph_and_says_why(dynoc, tmp_path):
    """AdamW's Python code reads its step count with .item() (its bias
    corrections are Python floats): breaks, a recompile per step (its state is
    guarded), and no step graph, never one baked at a stale step count."""
    script = tmp_path / "adamw.py"
    script.write_text(ADAMW)
    cap = tmp_path / "cap"
    p = dynoc("capture", script, "-o", cap, check=True)
    manifest = json.loads((cap / "manifest.json").read_text())
    assert manifest["steps"] == []
    assert len(manifest["step_refusals"]) == 3
    assert "no training step graph for" in p.stderr and "makes a Python number" in p.stderr
    assert len(manifest["recompiles"]) == 2
    assert all("___optimizer_state(G['opt'])" in r["guard"] for r in manifest["recompiles"])
    assert any("makes a Python number" in b["reason"] for b in manifest["breaks"]), p.stderr
    assert sum(g["kind"] == "backward" for g in manifest["graphs"]) == 3


def test_inductor_backend_builds_the_step_graphs(dynoc, tmp_path):
    """`dynoc capture --backend=inductor` builds every graph and every training
    step graph; the built step continues training as eager does."""
    import dynoc as dy
    import torch
    cap = tmp_path / "cap"
    dynoc("capture", TRAIN_PY, "--backend=inductor", "-o", cap, "--", "--save-data",
          cap / "data", check=True)
    for name in ("graph_1", "step_0", "step_1"):
        assert (cap / f"{name}.so").exists(), name
    want = eager_losses(tmp_path, TRAIN_PY, CAPTURED_STEPS + 2, CAPTURED_STEPS)
    model = dy.load(cap / "step_1.so")
    x = torch.from_numpy(np.load(cap / "data" / "x.npy"))
    y = torch.from_numpy(np.load(cap / "data" / "y.npy"))
    np.testing.assert_allclose([float(model(x, y)) for _ in range(2)], want, rtol=1e-5)


BERT = """
import torch
from transformers import BertConfig, BertForSequenceClassification
torch.manual_seed(0)
cfg = BertConfig(vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                 intermediate_size=64, max_position_embeddings=64)
model = BertForSequenceClassification(cfg).train()
opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
ids, labels = torch.randint(0, 100, (4, 16)), torch.tensor([0, 1, 1, 0])

@torch.compile
def step(ids, labels):
    opt.zero_grad()
    loss = model(input_ids=ids, labels=labels).loss
    loss.backward()
    opt.step()
    return loss

for _ in range(3):
    print(f"{step(ids, labels).item():.4f}")
"""


def test_transformers_bert_training_step(dynoc, tmp_path):
    """A training step of transformers' BERT (code no one here wrote): one
    backward graph per step with a gradient for each of its 41 parameters, and a
    step graph; building it fails naming the backward kernels the CPU backend
    lacks (docs/training.md, "Not yet"), and writes nothing."""
    script = tmp_path / "bert_train.py"
    script.write_text(BERT)
    cap = tmp_path / "cap"
    dynoc("capture", script, "-o", cap, check=True)
    manifest = json.loads((cap / "manifest.json").read_text())
    backward = [g for g in manifest["graphs"] if g["kind"] == "backward"]
    assert len(backward) == 2  # one per variant (the momentum buffers' recompile)
    assert all(len(g["grads"]) == 41 for g in backward)
    assert [s["name"] for s in manifest["steps"]] == ["step_0", "step_1"]
    p = dynoc("build", cap / "step_1.mlir", "-o", tmp_path / "bert.so")
    assert p.returncode == 1
    assert "op 'aten.native_layer_norm_backward' is not supported by the CPU backend yet" \
        in p.stderr
    assert not (tmp_path / "bert.so").exists()
