"""A whole training step compiled in process (issue 47: "one compiled step ...
from torch.compile"; docs/training.md, "In the same process: the whole
step"): a `train_step` that runs forward, `loss.backward()` and the
optimizer's update, compiled as people write it (a closure over the model and
optimizer; torch's optimizers as shipped: single-tensor, foreach and fused;
gradient clipping; an LR scheduler), runs one built step graph per call
after its first two (the optimizer's state appears at the first): the calls
are counted, and the losses, parameters and `.grad`s equal eager's."""
import copy
import json
import os
import subprocess
import sys

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import dynoc
from dynoc.jit import built

STEPS = 6


@pytest.fixture(autouse=True)
def _fresh_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("DYNOC_CACHE_DIR", str(tmp_path / "cache"))
    dynoc.reset()


torch.manual_seed(0)
MODEL = nn.Sequential(nn.Linear(16, 32), nn.GELU(), nn.Linear(32, 4))


def train(make_opt, compiled, clip=None, scheduler=False, zero_after=False):
    """STEPS steps of a closure train_step; (losses, parameters, grads, calls
    that ran built code)."""
    model = copy.deepcopy(MODEL)
    opt = make_opt(model.parameters())
    sched = torch.optim.lr_scheduler.StepLR(opt, 2, 0.5) if scheduler else None

    def train_step(x, y):
        loss = F.cross_entropy(model(x), y)
        if not zero_after:
            opt.zero_grad(set_to_none=True)
        loss.backward()
        if clip is not None:
            torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        opt.step()
        if zero_after:
            opt.zero_grad(set_to_none=True)
        return loss

    step = dynoc.compile(train_step) if compiled else train_step
    before = built.counters["compiled_calls"]
    g = torch.Generator().manual_seed(1)
    losses = []
    for _ in range(STEPS):
        x, y = torch.randn(8, 16, generator=g), torch.randint(0, 4, (8,), generator=g)
        losses.append(float(step(x, y)))
        if sched:
            sched.step()
    return (losses, [p.detach().clone() for p in model.parameters()],
            [p.grad for p in model.parameters()], built.counters["compiled_calls"] - before)


def assert_trains_like_eager(make_opt, captures=2, **kw):
    want, want_params, want_grads, _ = train(make_opt, False, **kw)
    got, params, grads, calls = train(make_opt, True, **kw)
    # the first call records with an empty optimizer state, the second with
    # its steady state; every later call is one built step
    assert calls == STEPS - captures
    torch.testing.assert_close(torch.tensor(got), torch.tensor(want), rtol=1e-5, atol=1e-6)
    for p, q in zip(params, want_params):
        torch.testing.assert_close(p, q, rtol=1e-5, atol=2e-6)
    for g, h in zip(grads, want_grads):
        if h is None:
            assert g is None
        else:
            torch.testing.assert_close(g, h, rtol=1e-5, atol=1e-6)


OPTIMIZERS = {
    "sgd_momentum": lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.9),
    "sgd_foreach": lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.9, foreach=True),
    "adam": lambda p: torch.optim.Adam(p, lr=1e-2),
    "adamw": lambda p: torch.optim.AdamW(p, lr=1e-2),
    "adamw_foreach": lambda p: torch.optim.AdamW(p, lr=1e-2, foreach=True),
    "adamw_fused": lambda p: torch.optim.AdamW(p, lr=1e-2, fused=True),
    "adamw_amsgrad": lambda p: torch.optim.AdamW(p, lr=1e-2, amsgrad=True),
    "rmsprop": lambda p: torch.optim.RMSprop(p, lr=1e-3),
    "rmsprop_centered_momentum": lambda p: torch.optim.RMSprop(p, lr=1e-3, momentum=0.9,
                                                               centered=True),
    "nadam": lambda p: torch.optim.NAdam(p, lr=1e-2),
    "radam": lambda p: torch.optim.RAdam(p, lr=1e-2),
    "asgd": lambda p: torch.optim.ASGD(p, lr=1e-2),
    "adamax": lambda p: torch.optim.Adamax(p, lr=1e-2),
    "adadelta": lambda p: torch.optim.Adadelta(p, lr=1.0),
    "adagrad": lambda p: torch.optim.Adagrad(p, lr=1e-2),
    "rprop": lambda p: torch.optim.Rprop(p, lr=1e-2),
}
# Adagrad makes its state when it is made: its first call records the steady
# state already.
CAPTURES = {"adagrad": 1}


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_compiled_training_step_runs_built_code_like_eager(name):
    assert_trains_like_eager(OPTIMIZERS[name], captures=CAPTURES.get(name, 2))


def test_gradient_clipping_leaves_the_clipped_gradients():
    """clip_grad_norm_ (foreach norms and scaling) inside the step: .grad
    after each call is the clipped gradient, as eager leaves it."""
    assert_trains_like_eager(OPTIMIZERS["adamw"], clip=0.1)


def test_zero_grad_after_the_update_leaves_no_gradient():
    assert_trains_like_eager(OPTIMIZERS["sgd_momentum"], zero_after=True)


def test_a_scheduler_changes_the_rate_of_the_built_step():
    """StepLR halves the rate every two steps (and wraps opt.step): the built
    step reads each new rate, with no recompile; a step baked at the
    recorded rate would drift from eager's losses."""
    assert_trains_like_eager(OPTIMIZERS["adamw"], scheduler=True)
    assert_trains_like_eager(OPTIMIZERS["sgd_momentum"], scheduler=True)


def test_optimizer_without_a_rule_runs_eagerly_and_says_why():
    """Adafactor reads its step count as a Python number: no step graph, one
    warning naming the break, and eager's numbers."""
    with pytest.warns(UserWarning, match="no training step graph: it breaks at .*makes a "
                                         "Python number"):
        got, params, _, calls = train(lambda p: torch.optim.Adafactor(p, lr=1e-2), True)
    want, want_params, _, _ = train(lambda p: torch.optim.Adafactor(p, lr=1e-2), False)
    assert calls == 0
    assert got == pytest.approx(want, rel=1e-6)


def test_torch_compile_of_a_train_step_under_dynoc(tmp_path):
    """The shape of torch.compile's own recipe (`@torch.compile def
    train_step`), routed to dynoc by DYNOC_TORCH_COMPILE=1: built code runs
    (DYNOC_STATS) and the printed losses are the plain run's."""
    script = tmp_path / "train.py"
    script.write_text(
        "import torch, torch.nn as nn, torch.nn.functional as F\n"
        "torch.manual_seed(0)\n"
        "model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))\n"
        "opt = torch.optim.AdamW(model.parameters(), lr=1e-2)\n"
        "@torch.compile\n"
        "def train_step(x, y):\n"
        "    loss = F.cross_entropy(model(x), y)\n"
        "    opt.zero_grad(set_to_none=True)\n"
        "    loss.backward()\n"
        "    opt.step()\n"
        "    return loss.detach()\n"
        "x, y = torch.randn(32, 8), torch.randint(0, 3, (32,))\n"
        "for i in range(8):\n"
        "    print(i, f'{float(train_step(x, y)):.5f}')\n")
    env = dict(os.environ, DYNOC_CACHE_DIR=str(tmp_path / "cache"))
    plain = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                           env=env, check=True)
    stats = tmp_path / "stats.json"
    env.update(DYNOC_TORCH_COMPILE="1", DYNOC_STATS=str(stats))
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         env=env)
    assert run.returncode == 0, run.stderr
    assert run.stdout == plain.stdout
    counted = json.loads(stats.read_text())
    assert counted["compiled_calls"] == 6 and counted["eager_variants"] == 0, counted
