"""dynoc.load_trainable (docs/training.md, "Forward and backward from Python"): a
captured forward graph and its backward graph, each built into a .so, as a torch
module that trains under torch.autograd: `loss.backward()` runs the backward
graph, the parameters are the module's own, and a torch optimizer drives them."""
import json

import numpy as np
import pytest

SCRIPT = """
import torch
import torch.nn as nn
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(6, 12), nn.Tanh(), nn.Linear(12, 3))
x, y = torch.randn(10, 6), torch.randint(0, 3, (10,))
{extra}

@torch.compile
def step(x, y):
    loss = nn.functional.cross_entropy(model(x), y)
    loss.backward()
    return loss

print(float(step(x, y)))
"""


def build_pair(dynoc, tmp_path, extra=""):
    script = tmp_path / "fb.py"
    script.write_text(SCRIPT.format(extra=extra))
    out = tmp_path / "out"
    dynoc("capture", script, "-o", out, check=True)
    manifest = json.loads((out / "manifest.json").read_text())
    bwd = next(g for g in manifest["graphs"] if g["kind"] == "backward")
    fwd = bwd["forward"][0]
    for name in (fwd, bwd["name"]):
        dynoc("build", out / f"{name}.mlir", "-o", tmp_path / f"{name}.so", check=True)
    return tmp_path / f"{fwd}.so", tmp_path / f"{bwd['name']}.so"


def eager_model(torch):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(6, 12), torch.nn.Tanh(), torch.nn.Linear(12, 3))
    x, y = torch.randn(10, 6), torch.randint(0, 3, (10,))
    return model, x, y


def test_torch_optimizer_trains_the_built_forward_and_backward(dynoc, tmp_path):
    """5 steps of torch's AdamW (with gradient clipping) over the module's
    parameters give eager's losses and parameters within 1e-5."""
    import dynoc as dy
    import torch
    fwd_so, bwd_so = build_pair(dynoc, tmp_path)
    module = dy.load_trainable(fwd_so, bwd_so)
    assert module.parameter_names() == ["G['model'][0].weight", "G['model'][0].bias",
                                        "G['model'][2].weight", "G['model'][2].bias"]
    assert isinstance(module, torch.nn.Module) and len(list(module.parameters())) == 4
    model, x, y = eager_model(torch)
    opts = [torch.optim.AdamW(m.parameters(), lr=0.01) for m in (model, module)]
    for _ in range(5):
        losses = []
        for m, opt, run in ((model, opts[0], lambda: torch.nn.functional.cross_entropy(model(x), y)),
                            (module, opts[1], lambda: module(x, y))):
            opt.zero_grad()
            loss = run()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(m.parameters(), 1.0)
            opt.step()
            losses.append(loss.item())
        assert losses[1] == pytest.approx(losses[0], rel=1e-5)
    for a, b in zip(model.parameters(), module.parameters()):
        np.testing.assert_allclose(b.detach(), a.detach(), rtol=1e-5, atol=1e-6)


def test_input_gradient_reaches_the_caller(dynoc, tmp_path):
    """An input that required grad under capture gets its gradient from the
    backward graph too."""
    import dynoc as dy
    import torch
    fwd_so, bwd_so = build_pair(dynoc, tmp_path, extra="x.requires_grad_()")
    module = dy.load_trainable(fwd_so, bwd_so)
    model, x, y = eager_model(torch)
    x.requires_grad_()
    torch.nn.functional.cross_entropy(model(x), y).backward()
    xd = x.detach().clone().requires_grad_()
    module(xd, y).backward()
    np.testing.assert_allclose(xd.grad, x.grad, rtol=1e-5, atol=1e-7)


def test_mismatched_pair_is_a_clear_error(dynoc, tmp_path):
    import dynoc as dy
    fwd_so, _ = build_pair(dynoc, tmp_path)
    with pytest.raises(ValueError, match="is not a backward graph"):
        dy.load_trainable(fwd_so, fwd_so)
