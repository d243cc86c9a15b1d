"""Backward graphs (docs/training.md): a region that calls loss.backward()
records the autograd engine's ops as a backward graph; built with `dynoc build`,
it must give the gradients torch autograd gave, for each kind of op a backward
pass runs (GEMMs, activations, losses, broadcasting, reductions), in f64 where
the CPU backend has it and f32 within 1e-4 relative."""
import json
import os
import pathlib
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
from graph_check import check_graphs  # noqa: E402

SCRIPT = """
import torch
import torch.nn as nn
torch.manual_seed(0)
torch.set_default_dtype(torch.{dtype})
{setup}

@torch.compile
def step(x, y):
    loss = {loss}
    loss.backward()
    return loss

print(float(step(x, y)))
"""

MLP = """model = nn.Sequential(nn.Linear(6, 12), nn.ReLU(), nn.Linear(12, 1))
x, y = torch.randn(10, 6), torch.randn(10, 1)"""
CASES = {
    # GEMM gradients (mm of transposes), bias sums, relu (threshold_backward), MSE
    "linear_relu_mse": (MLP, "nn.functional.mse_loss(model(x), y)",
                        ["G['model'][0].weight", "G['model'][0].bias",
                         "G['model'][2].weight", "G['model'][2].bias"]),
    # sigmoid_backward and tanh_backward from their saved outputs; sum's
    # gradient broadcast back (expand)
    "sigmoid_tanh_sum": ("""model = nn.Linear(5, 7)
x, y = torch.randn(4, 5), None""", "(torch.sigmoid(model(x)) * torch.tanh(model(x))).sum()",
                         ["G['model'].weight", "G['model'].bias"]),
    # broadcasting: a (1, n) scale and an (n,) shift; their gradients are sums
    # over the broadcast dims; mean's gradient is a scaled expand
    "broadcast_mean": ("""model = nn.Module()
model.scale = nn.Parameter(torch.randn(1, 8))
model.shift = nn.Parameter(torch.randn(8))
x, y = torch.randn(6, 8), None""", "((x * model.scale + model.shift) ** 2).mean()",
                       ["G['model'].scale", "G['model'].shift"]),
    # softmax's gradient (_softmax_backward_data) along the last dim
    "softmax": ("""model = nn.Linear(6, 5)
x, y = torch.randn(4, 6), torch.randn(4, 5)""", "(torch.softmax(model(x), dim=-1) * y).sum()",
                ["G['model'].weight", "G['model'].bias"]),
    # cross-entropy: log_softmax's and nll_loss's gradients (the one-hot of
    # the targets, rows whose target is ignore_index left out of the mean)
    "cross_entropy": ("""model = nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 4))
x, y = torch.randn(8, 6), torch.tensor([0, 3, 1, -100, 2, 2, 3, 0])""",
                      "nn.functional.cross_entropy(model(x), y)",
                      ["G['model'][0].weight", "G['model'][0].bias",
                       "G['model'][2].weight", "G['model'][2].bias"]),
    # reduction over one dim, then a sum-reduced MSE; an input that requires
    # grad gets its gradient too
    "reduction_input_grad": ("""model = nn.Linear(4, 3)
x, y = torch.randn(5, 4).requires_grad_(), torch.randn(5)""",
                             "nn.functional.mse_loss(model(x).sum(dim=1), y, reduction='sum')",
                             ["G['model'].weight", "G['model'].bias", "L['x']"]),
    # layer norm's three gradients (native_layer_norm_backward), over the
    # last dim of a 3-d input
    "layer_norm": ("""model = nn.Sequential(nn.Linear(6, 8), nn.LayerNorm(8))
x, y = torch.randn(3, 5, 6), torch.randn(3, 5, 8)""", "nn.functional.mse_loss(model(x), y)",
                   ["G['model'][0].weight", "G['model'][0].bias",
                    "G['model'][1].weight", "G['model'][1].bias"]),
    # batch norm in train mode (native_batch_norm_backward over the batch's
    # statistics): 1-d after a linear, 2-d over an (N, C, H, W) view, with
    # the input's gradient too
    "batch_norm": ("""model = nn.Module()
model.fc, model.bn1, model.bn2 = nn.Linear(6, 8), nn.BatchNorm1d(8), nn.BatchNorm2d(2)
x, y = torch.randn(10, 6).requires_grad_(), torch.randn(10, 8)""",
                   "nn.functional.mse_loss(model.bn2(model.bn1(model.fc(x)).view(10, 2, 2, 2))"
                   ".flatten(1), y)",
                   ["G['model'].fc.weight", "G['model'].fc.bias", "G['model'].bn1.weight",
                    "G['model'].bn1.bias", "G['model'].bn2.weight", "G['model'].bn2.bias",
                    "L['x']"]),
    # convolution_backward: a padded convolution, a strided grouped dilated
    # one (the transposed convolution of dy for the input's gradient,
    # per-image GEMMs over the input's columns for the weight's)
    "convolution": ("""model = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.Tanh(),
                      nn.Conv2d(4, 6, 3, stride=2, padding=2, dilation=2, groups=2))
x, y = torch.randn(2, 3, 9, 8).requires_grad_(), torch.randn(2, 6, 5, 4)""",
                    "nn.functional.mse_loss(model(x), y)",
                    ["G['model'][0].weight", "G['model'][0].bias", "G['model'][2].weight",
                     "G['model'][2].bias", "L['x']"]),
    # max_pool2d_with_indices_backward: 2x2 windows, and 3x3 ones with
    # stride 2, padding and ties (a ReLU's zeros) that pick the first element
    "max_pool": ("""model = nn.Conv2d(2, 3, 3, padding=1)
x, y = torch.randn(2, 2, 8, 8), torch.randn(2, 3, 2, 2)
pool, pool3 = nn.MaxPool2d(2), nn.MaxPool2d(3, stride=2, padding=1)""",
                 "nn.functional.mse_loss(pool3(pool(torch.relu(model(x)))), y)",
                 ["G['model'].weight", "G['model'].bias"]),
    # gelu_backward, exact and tanh-approximated
    "gelu": ("""model = nn.Linear(6, 8)
x, y = torch.randn(7, 6), torch.randn(7, 8)""",
             "(nn.functional.gelu(model(x)) * y).sum() + "
             "(nn.functional.gelu(model(x), approximate='tanh') ** 2).mean()",
             ["G['model'].weight", "G['model'].bias"]),
    # silu_backward (a Llama MLP's gate), and rotary halves: slices whose
    # slice_backward pads (constant_pad_nd)
    "silu_rotary": ("""model = nn.Linear(6, 8)
x, y = torch.randn(7, 6), torch.randn(7, 8)
def rotate(h):
    a, b = h[..., :4], h[..., 4:]
    return torch.cat([a * 0.5 - b, a + b * 0.5], dim=-1)""",
                    "(rotate(nn.functional.silu(model(x))) * y).sum()",
                    ["G['model'].weight", "G['model'].bias"]),
    # embedding_dense_backward (repeated and padding indices), then a
    # slice and a select of the embedded sequence (slice_/select_backward)
    "embedding_slice_select": ("""model = nn.Embedding(11, 4, padding_idx=0)
x, y = torch.tensor([[1, 3, 0, 3, 7], [2, 2, 10, 0, 5]]), torch.randn(2, 3, 4)""",
                               "nn.functional.mse_loss(model(x)[:, 1:4], y) + "
                               "model(x)[:, -1].sum()",
                               ["G['model'].weight"]),
    # attention by hand: batched GEMMs (bmm gradients), a causal mask
    # (masked_fill's gradient) and softmax
    "causal_attention": ("""model = nn.Linear(8, 24)
x, y = torch.randn(2, 5, 8), torch.randn(2, 5, 8)
mask = torch.triu(torch.ones(5, 5, dtype=torch.bool), 1)
def attend(h):
    q, k, v = h.split(8, dim=-1)
    s = (q @ k.transpose(1, 2)).masked_fill(mask, float('-inf'))
    return torch.softmax(s * 0.35, dim=-1) @ v""",
                         "nn.functional.mse_loss(attend(model(x)), y)",
                         ["G['model'].weight", "G['model'].bias"]),
}


def capture(dynoc, tmp_path, case, dtype):
    setup, loss, _ = CASES[case]
    script = tmp_path / "train_me.py"
    script.write_text(SCRIPT.format(dtype=dtype, setup=setup, loss=loss))
    out = tmp_path / "out"
    env_before = os.environ.get("DYNOC_SAVE_EXAMPLES")
    os.environ["DYNOC_SAVE_EXAMPLES"] = "1"
    try:
        dynoc("capture", script, "-o", out, check=True)
    finally:
        if env_before is None:
            del os.environ["DYNOC_SAVE_EXAMPLES"]
    return out, json.loads((out / "manifest.json").read_text())


# The CPU backend's batched GEMM and convolutions run in f32 only.
F32_ONLY = {"causal_attention", "convolution", "max_pool"}


@pytest.mark.parametrize("case,dtype", [(c, d) for c in sorted(CASES)
                                        for d in ("float64", "float32")
                                        if d == "float32" or c not in F32_ONLY])
def test_backward_graph_matches_autograd(dynoc, tmp_path, case, dtype):
    out, manifest = capture(dynoc, tmp_path, case, dtype)
    backward = [g for g in manifest["graphs"] if g["kind"] == "backward"]
    assert len(backward) == 1, [g["name"] for g in manifest["graphs"]]
    bwd = backward[0]
    # every leaf that requires grad gets its gradient as an output
    assert sorted(m["input"] for m in bwd["grads"]) == sorted(CASES[case][2])
    assert bwd["forward"] and bwd["saved"]["bytes"] > 0
    results = {r.name: r for r in check_graphs(pathlib.Path(out), manifest["graphs"])}
    r = results[bwd["name"]]
    assert r.built, r.error
    assert r.compared
    assert r.max_err <= (1e-10 if dtype == "float64" else 1e-4), (case, r.max_err)


def test_partitioner_recomputes_cheap_views(dynoc, tmp_path):
    """The transposed weights the forward's GEMMs made are saved by autograd;
    the partitioner recomputes them in the backward from the weights instead
    (the forward stops returning them), and says so in the manifest."""
    out, manifest = capture(dynoc, tmp_path, "linear_relu_mse", "float32")
    bwd = next(g for g in manifest["graphs"] if g["kind"] == "backward")
    fwd = next(g for g in manifest["graphs"] if g["name"] == bwd["forward"][0])
    assert bwd["recomputed"].get("aten.t", 0) >= 1, bwd["recomputed"]
    saved = [i for i in bwd["inputs"] if i["name"].startswith(fwd["name"] + ".output_")]
    assert bwd["saved"]["values"] == len(saved)
    # what stays saved: the relu output (threshold_backward and a GEMM read it)
    # and the GEMM's input, not the transposed weights
    assert all(tuple(i["shape"]) != (6, 12) for i in saved), saved
