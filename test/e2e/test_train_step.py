"""The training step graph (docs/training.md): a compiled train step's forward,
backward and update graphs stitched into `step_N.mlir`; built, each call of the
model is one training step, from Python (dynoc.load) and from C++ (libdynrt
alone, examples/train), with a loss curve matching eager's."""
import json
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
TRAIN_PY = os.path.join(ROOT, "examples", "train", "train.py")
GPT_PY = os.path.join(ROOT, "examples", "train", "gpt.py")
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
    ckpt = tmp_path / "ckpt.safetensors"
    # --lr writes the learning-rate weight (SGD's rule: a tensor input), here
    # with train.py's own rate; --checkpoint saves the trained state.
    p = subprocess.run([TRAIN_BIN, str(so), str(data / "x.npy"), str(data / "y.npy"),
                        str(MORE_STEPS), str(tmp_path / "want.npy"), "--lr", "0.05",
                        "--checkpoint", str(ckpt)],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.stdout.count(" loss ") == MORE_STEPS
    assert "MATCH (<= 1e-5)" in p.stdout
    from safetensors.numpy import load_file
    saved = load_file(ckpt)
    assert sum("momentum_buffer" in k for k in saved) == 4
    lrs = [k for k in saved if k.endswith("param_groups[0]['lr']")]
    assert len(lrs) == 1 and float(saved[lrs[0]]) == pytest.approx(0.05), list(saved)
    # a doubled rate is a different curve, from the same .so
    p = subprocess.run([TRAIN_BIN, str(so), str(data / "x.npy"), str(data / "y.npy"),
                        str(MORE_STEPS), str(tmp_path / "want.npy"), "--lr", "0.1"],
                       capture_output=True, text=True)
    assert p.returncode == 1 and "MISMATCH" in p.stdout


@pytest.mark.slow
def test_forward_backward_and_update_as_functions_train_from_cpp(dynoc, tmp_path):
    """The steady state's three graphs (forward graph_3, backward graph_4,
    update graph_5) built as one model with a function each: the C++ loop
    calls them in turn on one context (dynrt_context_call: the backward reads
    the forward's saved values, the update the backward's gradients, from the
    context) and its losses are eager's."""
    cap = tmp_path / "cap"
    dynoc("capture", TRAIN_PY, "-o", cap, "--", "--save-data", cap / "data", check=True)
    manifest = json.loads((cap / "manifest.json").read_text())
    kinds = [g.get("kind", "forward") for g in manifest["graphs"]]
    assert kinds[3:6] == ["forward", "backward", "forward"], kinds
    dynoc("build", *[cap / f"graph_{k}.mlir" for k in (3, 4, 5)], "-o", tmp_path / "parts.so",
          check=True)
    np.save(tmp_path / "want.npy", eager_losses(tmp_path, TRAIN_PY,
                                                CAPTURED_STEPS + MORE_STEPS, CAPTURED_STEPS))
    data = cap / "data"
    p = subprocess.run([TRAIN_BIN, str(tmp_path / "parts.so"), str(data / "x.npy"),
                        str(data / "y.npy"), str(MORE_STEPS), str(tmp_path / "want.npy")],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "MATCH (<= 1e-5)" in p.stdout
    # the same functions from Python (LoadedModel.call)
    import dynoc
    import torch
    model = dynoc.load(tmp_path / "parts.so")
    names = dict(model.functions())
    assert list(names) == ["graph_3", "graph_4", "graph_5"]
    assert names["graph_5"] == []
    x = torch.from_numpy(np.load(data / "x.npy"))
    y = torch.from_numpy(np.load(data / "y.npy"))
    region = dict(zip(names["graph_3"], (x, y)))
    got = []
    for _ in range(5):
        outputs = model.call("graph_3", x, y)
        feed, loss = [], None
        for name in names["graph_4"]:
            if name.startswith("grad("):
                loss = outputs[int(name.rsplit("_", 1)[1].rstrip(")"))]
                feed.append(torch.ones_like(loss))
            else:
                feed.append(region[name])
        model.call("graph_4", *feed)
        model.call("graph_5")
        got.append(float(loss))
    np.testing.assert_allclose(got, np.load(tmp_path / "want.npy")[:5], rtol=1e-5)
    with pytest.raises(dynoc.Error, match="has no function 'graph_9'"):
        model.call("graph_9")


@pytest.mark.slow
def test_tiny_gpt_trains_from_cpp_like_eager(dynoc, tmp_path):
    """examples/train/gpt.py: a character-level GPT (layer norms, causal
    attention, GELU, embeddings, cross-entropy) with AdamW. Its step graph
    builds, and 20 steps of it from C++ (libdynrt alone) give eager's losses
    within 1e-5."""
    cap = tmp_path / "gpt"
    p = dynoc("capture", GPT_PY, "-o", cap, "--", "--save-data", cap / "data", check=True)
    manifest = json.loads((cap / "manifest.json").read_text())
    assert [s["name"] for s in manifest["steps"]] == ["step_0", "step_1"], p.stderr
    backward = [g for g in manifest["graphs"] if g["kind"] == "backward"]
    assert len(backward[-1]["grads"]) == 30  # every parameter of the model
    dynoc("build", cap / "step_1.mlir", "-o", tmp_path / "gpt.so", check=True)
    np.save(tmp_path / "want.npy", eager_losses(tmp_path, GPT_PY, CAPTURED_STEPS + MORE_STEPS,
                                                CAPTURED_STEPS))
    p = subprocess.run([TRAIN_BIN, str(tmp_path / "gpt.so"), str(cap / "data" / "x.npy"),
                        str(cap / "data" / "y.npy"), str(MORE_STEPS), str(tmp_path / "want.npy")],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "MATCH (<= 1e-5)" in p.stdout
    losses = [float(line.split()[-1]) for line in p.stdout.splitlines() if " loss " in line]
    assert losses[-1] < losses[0] - 0.5  # it learns the batch


def test_cpp_loop_reports_bad_arguments(train_so, tmp_path):
    so, data = train_so
    p = subprocess.run([TRAIN_BIN, str(so), str(data / "x.npy"), str(tmp_path / "nope.npy")],
                       capture_output=True, text=True)
    assert p.returncode == 1 and "nope.npy" in p.stderr
    p = subprocess.run([TRAIN_BIN, str(so), str(data / "x.npy"), str(data / "y.npy"), "zero"],
                       capture_output=True, text=True)
    assert p.returncode == 2 and "STEPS must be a positive integer" in p.stderr
    p = subprocess.run([TRAIN_BIN, str(so), str(data / "x.npy"), str(data / "y.npy"),
                        "--lr", "-1"], capture_output=True, text=True)
    assert p.returncode == 2 and "--lr must be a positive number" in p.stderr


ADAM = """
import sys
import torch
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1))
kind, steps = sys.argv[1], int(sys.argv[2])
opt = {"adam": lambda p: torch.optim.Adam(p, lr=0.01),
       "adamw": lambda p: torch.optim.AdamW(p, lr=0.01, weight_decay=0.1),
       "nadam": lambda p: torch.optim.NAdam(p, lr=0.01),
       "adafactor": lambda p: torch.optim.Adafactor(p, lr=0.01)}[kind](model.parameters())
x, y = torch.randn(32, 8), torch.randn(32, 1)

@torch.compile
def step(x, y):
    opt.zero_grad()
    loss = torch.nn.functional.mse_loss(model(x), y)
    loss.backward()
    opt.step()
    return loss

for i in range(steps):
    if i == 3:  # a schedule's change: a new value of the lr input, no recompile
        opt.param_groups[0]["lr"] = 0.005
    if i == 8:
        opt.param_groups[0]["lr"] = 0.02
    print(f"loss {step(x, y).item():.9g}")
if len(sys.argv) > 3:
    torch.save({"x": x, "y": y, "params": [p.detach() for p in model.parameters()]},
               sys.argv[3])
"""
LR = "G['opt'].param_groups[0]['lr']"


@pytest.fixture(params=["adam", "adamw"])
def adam_step(request, dynoc, tmp_path):
    """The ADAM script captured (5 steps, the learning rate changed at the
    fourth) and its steady-state step built."""
    script = tmp_path / "adam.py"
    script.write_text(ADAM)
    cap = tmp_path / "cap"
    p = dynoc("capture", script, "-o", cap, "--", request.param, "5", check=True)
    manifest = json.loads((cap / "manifest.json").read_text())
    dynoc("build", cap / "step_1.mlir", "-o", tmp_path / "step.so", check=True)
    return request.param, script, manifest, p, tmp_path / "step.so"


def test_adam_step_graph_takes_step_count_and_lr_as_inputs(adam_step, python, tmp_path):
    """dynoc's rule for Adam/AdamW (docs/training.md): the step count and the
    learning rate are tensors the update reads, so the only recompile is the
    first step's (the state appears) and the lr change at step 4 is none; the
    built step then trains like eager (check_adam_step_model_trains_like_eager)."""
    kind, _, manifest, p, _ = adam_step
    assert [s["name"] for s in manifest["steps"]] == ["step_0", "step_1"], p.stderr
    assert manifest["step_refusals"] == []
    assert len(manifest["recompiles"]) == 1, manifest["recompiles"]
    step = manifest["steps"][1]
    weights = {i["name"]: i["kind"] for i in step["inputs"] if i["kind"] != "user"}
    assert weights[LR] == "buffer"
    written = {m["input"] for m in step["mutations"]}
    for state in ("step", "exp_avg", "exp_avg_sq"):
        assert sum(w.endswith(f"['{state}']") for w in written) == 4, (state, written)
    assert LR not in written
    update = manifest["graphs"][-1]  # the steady state's update graph
    guard = next(g for g in update["guards"] if "___optimizer_state" in g)
    # no learning rate among the hyperparameters, no step count per parameter
    assert "'lr'" not in guard and guard.count("'step'), None)") == 4, guard
    check_adam_step_model_trains_like_eager(adam_step, python, tmp_path)


def check_adam_step_model_trains_like_eager(adam_step, python, tmp_path):
    """The built step continues training from the captured state: 15 more
    steps with the learning rate written at the 8th (dynoc.LoadedModel's
    write_weight) match eager's losses, and the parameters after them match
    eager's within 1e-5; a checkpoint restores them into a fresh model."""
    import dynoc
    import torch
    kind, script, _, _, so = adam_step
    ref = tmp_path / "eager.pt"
    out = python(script, kind, "20", str(ref), check=True).stdout
    want = [float(line.split()[1]) for line in out.splitlines()]
    eager = torch.load(ref)
    model = dynoc.load(so)
    assert LR in model.weight_names()
    assert float(model.read_weight(LR)) == pytest.approx(0.005)  # as the script left it
    got = []
    for i in range(5, 20):
        if i == 8:
            model.write_weight(LR, 0.02)
        got.append(float(model(eager["x"], eager["y"])))
    np.testing.assert_allclose(got, want[5:], rtol=1e-5)
    names = ["G['model'][0].weight", "G['model'][0].bias", "G['model'][2].weight",
             "G['model'][2].bias"]
    for name, p in zip(names, eager["params"]):
        np.testing.assert_allclose(model.read_weight(name), p, rtol=1e-5, atol=1e-6,
                                   err_msg=name)
    model.save_weights(tmp_path / "ckpt.safetensors")
    fresh = dynoc.load(so)
    fresh.load_weights(tmp_path / "ckpt.safetensors")
    assert float(fresh(eager["x"], eager["y"])) == float(model(eager["x"], eager["y"]))
    with pytest.raises(dynoc.Error, match="no weight named 'nope'"):
        model.read_weight("nope")


# corpus p120: gradient accumulation over two micro-batches in one step
ACCUMULATE = (pathlib.Path(ROOT) / "test" / "capture" / "programs" /
              "p120_gradient_accumulation.py").read_text()


@pytest.mark.slow
def test_gradient_accumulation_step_trains_like_eager(dynoc, python, tmp_path):
    """Two micro-batches per step (corpus p120's program): the step graph holds both
    backward passes, the second accumulating into the first's gradients, and
    5 more steps of the built step give eager's losses."""
    import dynoc as dy
    import torch
    script = tmp_path / "accumulate.py"
    script.write_text(ACCUMULATE)
    cap = tmp_path / "cap"
    dynoc("capture", script, "-o", cap, "--", "3", str(tmp_path / "batch.pt"), check=True)
    manifest = json.loads((cap / "manifest.json").read_text())
    step = manifest["steps"][1]
    assert all(not m["input"].startswith("graph_") for m in step["mutations"]), step["mutations"]
    dynoc("build", cap / "step_1.mlir", "-o", tmp_path / "acc.so", check=True)
    python(script, "8", str(tmp_path / "eager.pt"), check=True)
    want = torch.load(tmp_path / "eager.pt")["losses"]
    batch = torch.load(tmp_path / "batch.pt")
    model = dy.load(tmp_path / "acc.so")
    got = [float(model(batch["x"], batch["y"])) for _ in range(5)]
    np.testing.assert_allclose(got, want[3:], rtol=1e-5)


PROGRAMS = pathlib.Path(ROOT) / "test" / "capture" / "programs"


@pytest.mark.parametrize("program,module", [
    ("p121_batch_norm_training.py", "G['model'].{}"),
    pytest.param("p122_cnn_batch_norm_training.py", "G['model'][{}]", marks=pytest.mark.slow)])
def test_batch_norm_train_mode_step_trains_like_eager(dynoc, python, tmp_path, program,
                                                      module):
    """BatchNorm in train mode (corpus p121: after linear layers; p122: in a
    CNN, whose backward has convolution_backward): the forward graph updates
    the running statistics (buffers the step writes back, one weight each
    under its module name in both variants); 5 more steps of the built step
    give eager's losses, parameters, running statistics and batch counts
    (the CNN's convolutions pack their weights again after each step's
    write-back)."""
    import dynoc as dy
    import torch
    script = tmp_path / "bn.py"
    script.write_text((PROGRAMS / program).read_text())
    cap = tmp_path / "cap"
    dynoc("capture", script, "-o", cap, "--", "3", str(tmp_path / "batch.pt"), check=True)
    python(script, "8", str(tmp_path / "eager.pt"), check=True)
    eager = torch.load(tmp_path / "eager.pt")

    def weight(key):  # a state_dict key as the weight's name
        head, rest = key.split(".", 1)
        return module.format(head) + "." + rest

    stats = [weight(k) for k in eager["state"] if ".running_" in k or "num_batches" in k]
    assert len(stats) == 6
    manifest = json.loads((cap / "manifest.json").read_text())
    assert manifest["step_refusals"] == []
    for step in manifest["steps"]:
        written = {m["input"] for m in step["mutations"]}
        assert set(stats) <= written, (step["name"], written)
    dynoc("build", cap / "step_1.mlir", "-o", tmp_path / "bn.so", check=True)
    batch = torch.load(tmp_path / "batch.pt")
    model = dy.load(tmp_path / "bn.so")
    got = [float(model(batch["x"], batch["y"])) for _ in range(5)]
    np.testing.assert_allclose(got, eager["losses"][3:], rtol=1e-5)
    for key, want in eager["state"].items():
        np.testing.assert_allclose(model.read_weight(weight(key)), want,
                                   rtol=1e-5, atol=1e-6, err_msg=key)


AUTOCAST = ACCUMULATE.replace(
    """    for xb, yb in ((x[:16], y[:16]), (x[16:], y[16:])):
        loss = torch.nn.functional.mse_loss(model(xb), yb) / 2
        loss.backward()""",
    """    with torch.autocast("cpu", dtype=torch.bfloat16):
        out = model(x)
    loss = torch.nn.functional.mse_loss(out.float(), y)
    loss.backward()""")


@pytest.mark.slow
def test_bf16_autocast_step_trains_like_eager(dynoc, python, tmp_path):
    """A step whose forward runs under bf16 autocast (bf16 GEMMs, f32 loss):
    the built step's losses are eager's within 2e-2 over 5 steps."""
    import dynoc as dy
    import torch
    assert "autocast" in AUTOCAST
    script = tmp_path / "autocast.py"
    script.write_text(AUTOCAST)
    cap = tmp_path / "cap"
    dynoc("capture", script, "-o", cap, "--", "3", str(tmp_path / "batch.pt"), check=True)
    assert "bf16" in (cap / "step_1.mlir").read_text()
    dynoc("build", cap / "step_1.mlir", "-o", tmp_path / "ac.so", check=True)
    python(script, "8", str(tmp_path / "eager.pt"), check=True)
    want = torch.load(tmp_path / "eager.pt")["losses"]
    batch = torch.load(tmp_path / "batch.pt")
    model = dy.load(tmp_path / "ac.so")
    got = [float(model(batch["x"], batch["y"])) for _ in range(5)]
    np.testing.assert_allclose(got, want[3:], rtol=2e-2)


def test_optimizer_without_a_rule_is_no_step_graph_and_says_why(dynoc, tmp_path):
    """Adafactor has no dynoc rule: its Python code reads the step count with
    .item(), so each step breaks and recompiles (its state is guarded) and no
    step graph is written, never one baked at a stale step count."""
    script = tmp_path / "adafactor.py"
    script.write_text(ADAM)
    cap = tmp_path / "cap"
    p = dynoc("capture", script, "-o", cap, "--", "adafactor", "3", check=True)
    manifest = json.loads((cap / "manifest.json").read_text())
    assert manifest["steps"] == []
    assert len(manifest["step_refusals"]) == 3
    assert "no training step graph for" in p.stderr and "makes a Python number" in p.stderr
    assert len(manifest["recompiles"]) == 2
    assert all("___optimizer_state(G['opt'])" in r["guard"] for r in manifest["recompiles"])


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
import sys
import torch
from transformers import BertConfig, BertForSequenceClassification
torch.manual_seed(0)
# no dropout: the comparison with eager is of deterministic steps
cfg = BertConfig(vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                 intermediate_size=64, max_position_embeddings=64, hidden_dropout_prob=0.0,
                 attention_probs_dropout_prob=0.0)
cfg._attn_implementation = sys.argv[3] if len(sys.argv) > 3 else "eager"
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

for _ in range(int(sys.argv[1])):
    print(f"{step(ids, labels).item():.9g}")
if len(sys.argv) > 2:
    torch.save({"ids": ids, "labels": labels}, sys.argv[2])
"""


def test_transformers_bert_training_step(dynoc, python, tmp_path):
    """A training step of transformers' BERT (code no one here wrote), its
    attention written out (attn_implementation "eager"): one backward graph per
    step with a gradient for each of its 41 parameters (layer norms, GELU,
    embeddings, attention), and a step graph that builds and continues training
    as eager does (5 more steps within 1e-5); the same with torch's SDPA,
    whose backward is the attention kernel's backward op."""
    import dynoc as dy
    import torch
    script = tmp_path / "bert_train.py"
    script.write_text(BERT)
    cap = tmp_path / "cap"
    dynoc("capture", script, "-o", cap, "--", "3", str(tmp_path / "batch.pt"), check=True)
    manifest = json.loads((cap / "manifest.json").read_text())
    backward = [g for g in manifest["graphs"] if g["kind"] == "backward"]
    assert len(backward) == 2  # one per variant (the momentum buffers' recompile)
    assert all(len(g["grads"]) == 41 for g in backward)
    assert [s["name"] for s in manifest["steps"]] == ["step_0", "step_1"]
    dynoc("build", cap / "step_1.mlir", "-o", tmp_path / "bert.so", check=True)
    want = [float(v) for v in python(script, "8", check=True).stdout.split()]
    batch = torch.load(tmp_path / "batch.pt")
    model = dy.load(tmp_path / "bert.so")
    got = [float(model(batch["ids"], batch["labels"])) for _ in range(5)]
    np.testing.assert_allclose(got, want[3:], rtol=1e-5)
    # With torch's SDPA the backward runs the attention kernel's backward, an
    # op of the dialect: a step graph too, which builds and trains as eager.
    sdpa = tmp_path / "sdpa"
    p = dynoc("capture", script, "-o", sdpa, "--", "3", str(tmp_path / "b.pt"), "sdpa",
              check=True)
    assert "no training step graph" not in p.stderr
    manifest = json.loads((sdpa / "manifest.json").read_text())
    assert [s["name"] for s in manifest["steps"]] == ["step_0", "step_1"]
    dynoc("build", sdpa / "step_1.mlir", "-o", tmp_path / "bert_sdpa.so", check=True)
    want = [float(v) for v in python(script, "8", str(tmp_path / "b2.pt"), "sdpa",
                                     check=True).stdout.split()]
    batch = torch.load(tmp_path / "b.pt")
    model = dy.load(tmp_path / "bert_sdpa.so")
    got = [float(model(batch["ids"], batch["labels"])) for _ in range(5)]
    np.testing.assert_allclose(got, want[3:], rtol=1e-5)

RESNET = """
import sys
import torch
from transformers import ResNetConfig, ResNetForImageClassification
torch.manual_seed(0)
cfg = ResNetConfig(num_channels=3, embedding_size=8, hidden_sizes=[8, 16], depths=[1, 1],
                   layer_type="basic", num_labels=4)
model = ResNetForImageClassification(cfg).train()
opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
x, y = torch.randn(4, 3, 32, 32), torch.tensor([0, 1, 2, 3])

@torch.compile
def step(x, y):
    opt.zero_grad()
    loss = model(pixel_values=x, labels=y).loss
    loss.backward()
    opt.step()
    return loss

for _ in range(int(sys.argv[1])):
    print(f"{step(x, y).item():.9g}")
if len(sys.argv) > 2:
    torch.save({"x": x, "y": y}, sys.argv[2])
"""


@pytest.mark.slow
def test_transformers_resnet_training_step(dynoc, python, tmp_path):
    """A training step of transformers' ResNet (code no one here wrote):
    convolutions with BatchNorm in train mode, a padded 3x3 max pool, residual
    blocks and an adaptive average pool; its step graph builds and continues
    training as eager does (5 more steps within 1e-5; observed 1.4e-7), with
    every BatchNorm's running statistics written back."""
    import dynoc as dy
    import torch
    script = tmp_path / "resnet_train.py"
    script.write_text(RESNET)
    cap = tmp_path / "cap"
    dynoc("capture", script, "-o", cap, "--", "3", str(tmp_path / "batch.pt"), check=True)
    manifest = json.loads((cap / "manifest.json").read_text())
    assert manifest["step_refusals"] == []
    step = manifest["steps"][1]
    written = {m["input"] for m in step["mutations"]}
    assert sum(w.endswith(".running_var") for w in written) == 6, written
    ops = {op for g in manifest["graphs"] for op in g.get("ops", [])}
    assert {"aten.convolution_backward", "aten.native_batch_norm_backward",
            "aten.max_pool2d_with_indices_backward"} <= ops, ops
    dynoc("build", cap / "step_1.mlir", "-o", tmp_path / "resnet.so", check=True)
    want = [float(v) for v in python(script, "8", check=True).stdout.split()]
    batch = torch.load(tmp_path / "batch.pt")
    model = dy.load(tmp_path / "resnet.so")
    got = [float(model(batch["x"], batch["y"])) for _ in range(5)]
    np.testing.assert_allclose(got, want[3:], rtol=1e-5)
