"""Training through the activations and losses public training scripts use
(issue 47's "ops seen in these programs"): leaky_relu, elu, softplus,
hardswish, hardsigmoid, hardtanh/relu6, mish, glu, log-sigmoid, hard/soft
shrink, gelu, binary cross-entropy (on probabilities and on logits), L1 (sgn in its
backward), smooth L1 and Huber, KL divergence (xlogy), and a clamp in
F.normalize. A compiled forward is trained through by an eager backward: the
built forward and backward graphs run (counted) and the gradients equal
eager's."""
import pytest
import torch
import torch.nn.functional as F

import dynoc


@pytest.fixture(autouse=True)
def _fresh_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("DYNOC_CACHE_DIR", str(tmp_path / "cache"))
    dynoc.reset()


TARGET = torch.rand(4, 6)
LOSSES = {
    "leaky_relu": lambda x: (F.leaky_relu(x, 0.2) * TARGET).sum(),
    "elu": lambda x: (F.elu(x, alpha=1.3) * TARGET).sum(),
    "selu": lambda x: (F.selu(x) * TARGET).sum(),
    "softplus": lambda x: (F.softplus(x, beta=2.0) * TARGET).sum(),
    "hardswish": lambda x: (F.hardswish(x * 3) * TARGET).sum(),
    "gelu": lambda x: (F.gelu(x) * TARGET).sum(),
    "hardsigmoid": lambda x: (F.hardsigmoid(x * 4) * TARGET).sum(),
    "hardtanh": lambda x: (F.hardtanh(x, -0.5, 0.8) * TARGET).sum(),
    "relu6": lambda x: (F.relu6(x * 4) * TARGET).sum(),
    "mish": lambda x: (F.mish(x) * TARGET).sum(),
    "glu": lambda x: (F.glu(x, 1) * TARGET[:, :3]).sum(),
    "logsigmoid": lambda x: (F.logsigmoid(x * 3) * TARGET).sum(),
    "hardshrink": lambda x: (F.hardshrink(x, 0.4) * TARGET).sum(),
    "softshrink": lambda x: (F.softshrink(x) * TARGET).sum(),
    "bce": lambda x: F.binary_cross_entropy(torch.sigmoid(x), TARGET),
    "bce_weighted_sum": lambda x: F.binary_cross_entropy(torch.sigmoid(x), TARGET,
                                                         weight=TARGET + 0.5, reduction="sum"),
    "bce_with_logits": lambda x: F.binary_cross_entropy_with_logits(x, TARGET),
    "l1": lambda x: F.l1_loss(x, TARGET),
    "smooth_l1": lambda x: F.smooth_l1_loss(x, TARGET, beta=0.5),
    "smooth_l1_beta0_sum": lambda x: F.smooth_l1_loss(x, TARGET, beta=0.0, reduction="sum"),
    "huber": lambda x: F.huber_loss(x, TARGET, delta=0.7),
    "huber_none": lambda x: (F.huber_loss(x, TARGET, reduction="none") * TARGET).sum(),
    "kl_div": lambda x: F.kl_div(F.log_softmax(x, 1), TARGET / TARGET.sum(1, keepdim=True),
                                 reduction="batchmean"),
    "normalize": lambda x: (F.normalize(x, dim=1) * TARGET).sum(),
}


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_gradients_through_the_built_forward_and_backward_equal_eagers(name):
    fn = LOSSES[name]
    f = dynoc.compile(fn)
    for _ in range(3):
        x = torch.randn(4, 6, requires_grad=True)
        loss = f(x)
        loss.backward()
        ref_x = x.detach().clone().requires_grad_(True)
        ref = fn(ref_x)
        ref.backward()
        torch.testing.assert_close(loss.detach(), ref.detach(), rtol=1e-5, atol=1e-6)
        torch.testing.assert_close(x.grad, ref_x.grad, rtol=1e-5, atol=1e-6)
    assert f.compiled_calls() == 2, dynoc.explain(fn)(torch.randn(4, 6, requires_grad=True))


def test_a_backward_op_dynoc_cannot_record_is_named():
    """Never silently eager, and say why: a region whose backward meets an
    op of no graph (here upsampling's backward; glu's before it was built)
    runs eagerly with a warning naming that op, not a missing gradient."""
    def fn(x):
        return (F.interpolate(x, scale_factor=2) * 2).square().sum()
    f = dynoc.compile(fn)
    x = torch.randn(1, 2, 4, 4, requires_grad=True)
    with pytest.warns(UserWarning, match=r"breaks at aten\.upsample_nearest2d_backward: "
                                         r"aten\.upsample_nearest2d_backward is not an op"):
        f(x).backward()
    torch.testing.assert_close(x.grad, torch.autograd.grad(fn(x), x)[0])
