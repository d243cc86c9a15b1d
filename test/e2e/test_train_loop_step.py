"""`dynoc capture train.py` of training loops as scripts write them (issue 47,
docs/training.md "The step of a training loop"): the loop's iterations fold
into one forward, one backward and one update graph, stitched into one step
model (`step_N.mlir`, the report counts the iterations); built, each call of it
is one more training step, with eager's losses. Batches from a DataLoader are
the step's inputs (its sampling and collation run unrecorded)."""
import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest

# A main() loop over a DataLoader of uint8 images, SGD with momentum, the
# loss logged each step (loss.item() breaks between update and forward).
DATALOADER_LOOP = """
import sys
import torch, torch.nn as nn, torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

def more_batches(n):
    g = torch.Generator().manual_seed(5)
    return [(torch.randint(0, 256, (32, 1, 28, 28), dtype=torch.uint8, generator=g),
             torch.randint(0, 10, (32,), generator=g)) for _ in range(n)]

def train_on(model, opt, x, y):
    opt.zero_grad()
    loss = F.cross_entropy(model(x.float() / 255.0), y)
    loss.backward()
    opt.step()
    return loss

def main():
    torch.manual_seed(0)
    images = torch.randint(0, 256, (256, 1, 28, 28), dtype=torch.uint8)
    labels = torch.randint(0, 10, (256,))
    loader = DataLoader(TensorDataset(images, labels), batch_size=32, shuffle=True)
    model = MODEL
    opt = OPTIMIZER
    for epoch in range(3):
        model.train()
        total = 0.0
        for x, y in loader:
            total += train_on(model, opt, x, y).item()
        print(epoch, f"{total:.4f}")
    if "--continue" in sys.argv:  # eager's next steps, for the test
        print([train_on(model, opt, x, y).item() for x, y in more_batches(10)])

main()
"""

# A module-level loop that logs only at the end: nothing breaks between
# opt.step() and the next forward, so each iteration's graph holds the update
# of the one before, then the forward. AdamW (its step count is state) and
# clip_grad_norm_ (the gradients changed in place).
MERGED_LOOP = """
import sys
import torch, torch.nn as nn

torch.manual_seed(0)
x = torch.randn(32, 4)
y = x @ torch.tensor([[1.0], [-2.0], [0.5], [0.25]]) + 0.1
model = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 1))
opt = torch.optim.AdamW(model.parameters(), lr=0.01)
steps = 50 if "--continue" in sys.argv else 40
losses = []
for step in range(steps):
    opt.zero_grad(set_to_none=True)
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    losses.append(loss)
print(f"{loss.item():.5f}")
if "--continue" in sys.argv:
    print([l.item() for l in losses[40:]])
"""

# Batches sliced from one tensor at an offset that changes every iteration:
# each iteration's graph has its own constants, and the report says which.
SLICED_LOOP = """
import torch, torch.nn as nn, torch.nn.functional as F

torch.manual_seed(0)
data = torch.randn(400, 8)
model = nn.Linear(8, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for it in range(12):
    batch = data[it * 16:(it + 1) * 16]
    loss = model(batch).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
print(f"{loss.item():.5f}")
"""


# nanoGPT's get_batch: random offsets into one token tensor, each a Python
# number (`data[i:i + T]` for `i` in a tensor), stacked. The offsets are
# constants of each iteration's forward graph; without that data preparation
# the forward is the same every iteration, and the step takes the batch.
GET_BATCH_LOOP = """
import sys
import torch, torch.nn as nn, torch.nn.functional as F

torch.manual_seed(0)
V, T, B = 64, 16, 4
data = torch.randint(0, V, (2000,))

def get_batch(g=None):
    ix = torch.randint(len(data) - T, (B,), generator=g)
    x = torch.stack([data[i:i + T] for i in ix])
    y = torch.stack([data[i + 1:i + 1 + T] for i in ix])
    return x, y

class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(V, 32)
        self.fc = nn.Linear(32, V)
    def forward(self, x, y):
        logits = self.fc(F.gelu(self.emb(x)))
        return logits, F.cross_entropy(logits.view(-1, V), y.view(-1))

model = Model()
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)

def step(x, y):
    logits, loss = model(x, y)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    return loss

for it in range(30):
    loss = step(*get_batch())
    if it % 10 == 0:
        print(it, f"{loss.item():.4f}")
if "--continue" in sys.argv:
    g = torch.Generator().manual_seed(7)
    print([step(*get_batch(g)).item() for _ in range(10)])
"""

# An op dynoc cannot record runs eagerly between the update and the next
# forward each iteration: the step is refused, never built without it.
OUTSIDE_OP_LOOP = """
import torch, torch.nn as nn

torch.manual_seed(0)
x = torch.randn(16, 4)
model = nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for it in range(6):
    loss = model(x).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    with torch.no_grad():
        model.bias.random_(0, 1)  # an op of no graph: sets the bias to 0
print(f"{loss.item():.5f}")
"""


def _capture(dynoc, tmp_path, source):
    script = tmp_path / "train.py"
    script.write_text(textwrap.dedent(source))
    plain = subprocess.run([sys.executable, script], capture_output=True, text=True,
                           check=True)
    cap = tmp_path / "cap"
    p = dynoc("capture", script, "-o", cap, check=True)
    assert p.stdout == plain.stdout  # the script's own output, unchanged
    manifest = json.loads((cap / "manifest.json").read_text())
    return script, cap, manifest, p.stderr


def _eager_continuation(script):
    out = subprocess.run([sys.executable, script, "--continue"], capture_output=True,
                         text=True, check=True).stdout
    return np.array(json.loads(out.strip().splitlines()[-1]))


MLP = "nn.Sequential(nn.Flatten(), nn.Linear(784, 64), nn.ReLU(), nn.Linear(64, 10))"
CNN = ("nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), "
       "nn.MaxPool2d(2), nn.Flatten(), nn.Linear(8 * 14 * 14, 10))")
SGD = "torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)"


@pytest.mark.parametrize("model,optimizer,written_count", [
    # four parameters and four momentum buffers
    (MLP, SGD, 8),
    # torch's foreach AdamW (its addcdiv by a tensor of step sizes): the
    # parameters, both moments and the step counts
    (MLP, "torch.optim.AdamW(model.parameters(), lr=1e-3, foreach=True)", 16),
    # batch norm in training mode: its running statistics and batch count are
    # state the forward writes; six parameters, six momentum buffers
    (CNN, SGD, 15)], ids=["mlp-sgd", "mlp-adamw-foreach", "cnn-batchnorm-sgd"])
def test_dataloader_loop_is_one_step_model_that_trains_like_eager(dynoc, tmp_path, model,
                                                                  optimizer, written_count):
    import dynoc as dynoc_py
    import torch
    script, cap, manifest, report = _capture(
        dynoc, tmp_path, DATALOADER_LOOP.replace("OPTIMIZER", optimizer).replace("MODEL", model))
    # the sampler's randperm and the collation are not in the graphs: no
    # break there, and the 24 iterations fold into a handful of graphs (those
    # recorded: the loop settles, and recording resumes at each epoch's print)
    assert "randperm" not in report and "random" not in report, report
    assert len(manifest["graphs"]) <= 8, [g["name"] for g in manifest["graphs"]]
    [step] = manifest["steps"]
    assert step["loop"]["iterations"] == 24, step["loop"]
    assert "24 iterations" in report
    inputs = [i for i in step["inputs"] if i["kind"] == "user"]
    assert [(i["name"], i["dtype"]) for i in inputs] == [
        ("next(DataLoader)[0]", "uint8"), ("next(DataLoader)[1]", "int64")]
    written = {m["input"] for m in step["mutations"]}
    assert len(written) == written_count, written
    dynoc("build", cap / "step_0.mlir", "-o", tmp_path / "step.so", check=True)
    want = _eager_continuation(script)
    step = dynoc_py.load(tmp_path / "step.so")
    g = torch.Generator().manual_seed(5)
    batches = [(torch.randint(0, 256, (32, 1, 28, 28), dtype=torch.uint8, generator=g),
                torch.randint(0, 10, (32,), generator=g)) for _ in range(10)]
    got = np.array([float(step(x, y)) for x, y in batches])
    np.testing.assert_allclose(got, want, rtol=1e-5)


def test_loop_without_break_after_the_update_is_split_into_a_step(dynoc, tmp_path):
    import dynoc as dynoc_py
    import torch
    script, cap, manifest, report = _capture(dynoc, tmp_path, MERGED_LOOP)
    [step] = manifest["steps"]
    loop = step["loop"]
    assert loop["update"] == loop["forward"] + "_update", loop
    assert loop["iterations"] == 40
    # the parameters, AdamW's two moments and step count for each of four
    written = {m["input"] for m in step["mutations"]}
    assert len(written) == 16, written
    dynoc("build", cap / "step_0.mlir", "-o", tmp_path / "step.so", check=True)
    want = _eager_continuation(script)
    torch.manual_seed(0)
    x = torch.randn(32, 4)
    y = x @ torch.tensor([[1.0], [-2.0], [0.5], [0.25]]) + 0.1
    model = dynoc_py.load(tmp_path / "step.so")
    got = np.array([float(model(x, y)) for _ in range(10)])
    # Under capture AdamW runs its capturable form (dynoc's optimizer rule:
    # the bias corrections as tensor ops), whose rounding differs from the
    # plain run's: after the 40 recorded steps the states differ by ~1e-6.
    np.testing.assert_allclose(got, want, rtol=5e-5)
    assert got[-1] < got[0]


def test_loop_whose_iterations_differ_says_which_constant(dynoc, tmp_path):
    _, _, manifest, report = _capture(dynoc, tmp_path, SLICED_LOOP)
    assert manifest["steps"] == []
    [refusal] = manifest["step_refusals"]
    assert "differ from one iteration to the next" in refusal["reason"]
    assert "aten.slice.Tensor" in refusal["reason"] and "start = " in refusal["reason"]
    assert "no training step graph" in report


def test_dataloader_outside_capture_is_torch_own(tmp_path):
    """Importing dynoc wraps nothing a plain program sees differently: the
    wrapped DataLoader methods are torch's own outside a recording region."""
    code = textwrap.dedent("""
        import torch
        from torch.utils.data import DataLoader, TensorDataset
        import dynoc
        from dynoc.capture import data_loading
        data_loading.install()
        loader = DataLoader(TensorDataset(torch.arange(10.0)), batch_size=4)
        print([b[0].tolist() for b in loader])
    """)
    from conftest import package_env
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=package_env(), check=True).stdout
    assert out.strip() == "[[0.0, 1.0, 2.0, 3.0], [4.0, 5.0, 6.0, 7.0], [8.0, 9.0]]"


def test_loop_with_an_op_run_outside_the_graphs_gets_no_step(dynoc, tmp_path):
    _, _, manifest, report = _capture(dynoc, tmp_path, OUTSIDE_OP_LOOP)
    assert manifest["steps"] == []
    [refusal] = manifest["step_refusals"]
    assert "an op runs outside the graphs after" in refusal["reason"], refusal
    assert "aten.random_" in refusal["reason"]


def test_batch_sliced_at_random_offsets_is_the_step_input(dynoc, tmp_path):
    import dynoc as dynoc_py
    import torch
    script, cap, manifest, report = _capture(dynoc, tmp_path, GET_BATCH_LOOP)
    [step] = manifest["steps"]
    assert step["loop"]["iterations"] == 30
    # x as the stack made it; y as the loss reads it (y.view(-1)), the data
    # preparation's result
    users = [(i["name"], i["shape"]) for i in step["inputs"] if i["kind"] == "user"]
    assert [shape for _, shape in users] == [[4, 16], [64]], users
    assert users[1][0] == "batch[0]"
    dynoc("build", cap / "step_0.mlir", "-o", tmp_path / "step.so", check=True)
    want = _eager_continuation(script)
    torch.manual_seed(0)
    data = torch.randint(0, 64, (2000,))
    g = torch.Generator().manual_seed(7)
    model = dynoc_py.load(tmp_path / "step.so")
    got = []
    for _ in range(10):
        ix = torch.randint(len(data) - 16, (4,), generator=g)
        x = torch.stack([data[i:i + 16] for i in ix])
        y = torch.stack([data[i + 1:i + 17] for i in ix])
        got.append(float(model(x, y.reshape(-1))))
    np.testing.assert_allclose(got, want, rtol=1e-5)


def test_loop_whose_update_breaks_gets_no_step(dynoc, tmp_path):
    """Adafactor (no dynoc rule) reads its step count as a Python number: a
    break inside the update leaves its second half, which writes the
    parameters, in graphs of their own; a step of the first half alone would
    not train, so there is none, with the reason."""
    source = MERGED_LOOP.replace("torch.optim.AdamW(model.parameters(), lr=0.01)",
                                 "torch.optim.Adafactor(model.parameters(), lr=0.01)")
    assert "Adafactor" in source
    _, _, manifest, report = _capture(dynoc, tmp_path, source)
    assert manifest["steps"] == []
    [refusal] = manifest["step_refusals"]
    assert "also runs in each iteration and writes" in refusal["reason"], refusal


# The loss logged before its backward pass (`print(loss.item())`, then
# `loss.backward()`), as LBFGS closures and many tutorials do: the backward
# takes the gradient of the forward's loss, which crossed the print's break.
LOG_BEFORE_BACKWARD = """
import json, sys
import torch, torch.nn as nn
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)

def train_on(x, y):
    opt.zero_grad()
    loss = nn.functional.mse_loss(model(x), y)
    print(round(loss.item(), 4))
    loss.backward()
    opt.step()
    return loss

x, y = torch.randn(16, 4), torch.randn(16, 1)
for i in range(12):
    train_on(x, y)
if "--continue" in sys.argv:  # eager's next steps, for the test
    g = torch.Generator().manual_seed(4)
    batches = [(torch.randn(16, 4, generator=g), torch.randn(16, 1, generator=g))
               for _ in range(5)]
    print(json.dumps([train_on(a, b).item() for a, b in batches]))
"""


def test_loss_logged_before_backward_is_one_step(dynoc, tmp_path):
    import dynoc as dynoc_py
    import torch
    script, cap, manifest, report = _capture(dynoc, tmp_path, LOG_BEFORE_BACKWARD)
    [step] = manifest["steps"]
    assert step["loop"]["iterations"] == 12, step["loop"]
    backward = [g for g in manifest["graphs"] if g["kind"] == "backward"]
    # the seed is the forward's loss, not the print's (empty) graph
    assert all(i["name"].startswith("grad(graph_") for g in backward for i in g["inputs"][:1])
    dynoc("build", cap / "step_0.mlir", "-o", tmp_path / "step.so", check=True)
    want = _eager_continuation(script)
    built = dynoc_py.load(tmp_path / "step.so")
    g = torch.Generator().manual_seed(4)
    batches = [(torch.randn(16, 4, generator=g), torch.randn(16, 1, generator=g))
               for _ in range(5)]
    got = np.array([float(built(a, b)) for a, b in batches])
    np.testing.assert_allclose(got, want, rtol=1e-5)
