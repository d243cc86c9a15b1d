"""CUDA-only kernels are recorded as the dialect's ops (capture/cuda_kernels.py).
The GPU run is test/gpu/test_jit_cuda.py; here, on the CPU, the rewrite
itself: each kernel's call, as a GPU region makes it, turns into a call of
the dialect's op that computes the same result, and the calls whose other
outputs could matter are left as they are."""
import pytest
import torch

from dynoc.capture import cuda_kernels as _cuda_kernels

aten = torch.ops.aten


def qkv(requires_grad=False):
    torch.manual_seed(0)
    return [torch.randn(2, 4, 16, 8, requires_grad=requires_grad) for _ in range(3)]


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("kernel,make_args", [
    (aten._scaled_dot_product_efficient_attention.default,
     lambda q, k, v, mask, causal: ((q, k, v, mask, False, 0.0, causal), {"scale": 0.3})),
    (aten._scaled_dot_product_flash_attention.default,
     lambda q, k, v, mask, causal: ((q, k, v, 0.0, causal), {"scale": 0.3})),
    (aten._scaled_dot_product_cudnn_attention.default,
     lambda q, k, v, mask, causal: ((q, k, v, mask, False), {"is_causal": causal,
                                                           "scale": 0.3})),
], ids=["efficient", "flash", "cudnn"])
def test_a_fused_attention_kernel_becomes_the_attention_op(kernel, make_args, causal):
    q, k, v = qkv()
    mask = None if causal or kernel is aten._scaled_dot_product_flash_attention.default \
        else torch.randn(2, 4, 16, 16)
    args, kwargs = make_args(q, k, v, mask, causal)
    func, new_args, new_kwargs, results_of, kept_of = _cuda_kernels.as_graph_op(kernel, args,
                                                                                 kwargs)
    assert func is aten._scaled_dot_product_flash_attention_for_cpu.default
    got = func(*new_args, **new_kwargs)[0]
    want = torch.nn.functional.scaled_dot_product_attention(
        q, k, v, attn_mask=mask, is_causal=causal, scale=0.3)
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)
    # The graph op's results: the kernel's output and a log-sum-exp stand-in.
    out = (want, torch.zeros(2, 4, 32), torch.zeros(()), torch.zeros(()))
    attn, lse = results_of(out)
    assert attn is want
    assert lse.device.type == "meta" and tuple(lse.shape) == (2, 4, 16)
    assert kept_of(out) == ()  # no backward reads the kernel's own log-sum-exp


def test_attention_under_autograd_keeps_the_kernels_log_sum_exp():
    """With grad, the kernel's own (padded) log-sum-exp stands for the graph
    op's: its backward kernel is handed that tensor."""
    q, k, v = qkv(requires_grad=True)
    kernel = aten._scaled_dot_product_efficient_attention.default
    func, _, _, results_of, kept_of = _cuda_kernels.as_graph_op(
        kernel, (q, k, v, None, True, 0.0, True), {})
    assert func is aten._scaled_dot_product_flash_attention_for_cpu.default
    padded = torch.zeros(2, 4, 32)
    out = (torch.zeros(2, 4, 16, 8), padded, torch.zeros(()), torch.zeros(()))
    assert [(t is padded, i) for t, i in kept_of(out)] == [(True, 1)]


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("kernel,make_args", [
    (aten._scaled_dot_product_efficient_attention_backward.default,
     lambda g, q, k, v, o, lse, causal: ((g, q, k, v, None, o, lse, torch.zeros(()),
                                          torch.zeros(()), 0.0, [True, True, True, False],
                                          causal), {"scale": 0.3})),
    (aten._scaled_dot_product_flash_attention_backward.default,
     lambda g, q, k, v, o, lse, causal: ((g, q, k, v, o, lse, None, None, 16, 16, 0.0, causal,
                                          torch.zeros(()), torch.zeros(())), {"scale": 0.3})),
], ids=["efficient", "flash"])
def test_a_fused_attention_backward_becomes_the_attention_backward_op(kernel, make_args,
                                                                      causal):
    """The backward kernels' calls map onto the dialect's attention backward
    with the same gradients (the CPU op computes them here)."""
    q, k, v = qkv(requires_grad=True)
    o = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=0.3)
    g = torch.randn_like(o)
    o.backward(g)
    _, lse = aten._scaled_dot_product_flash_attention_for_cpu.default(
        q.detach(), k.detach(), v.detach(), 0.0, causal, scale=0.3)
    args, kwargs = make_args(g, q.detach(), k.detach(), v.detach(), o.detach(), lse, causal)
    func, new_args, new_kwargs, results_of, kept_of = _cuda_kernels.as_graph_op(kernel, args,
                                                                                 kwargs)
    assert func is aten._scaled_dot_product_flash_attention_for_cpu_backward.default
    grads = results_of(func(*new_args, **new_kwargs) + (None,))
    assert len(grads) == 3 and kept_of(()) == ()
    for got, want in zip(grads, (q.grad, k.grad, v.grad)):
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)


def test_cudnn_batch_norm_not_training_becomes_native_batch_norm():
    torch.manual_seed(0)
    bn = torch.nn.BatchNorm2d(3).eval()
    bn.running_mean.uniform_(-1, 1)
    bn.running_var.uniform_(0.5, 2)
    x = torch.randn(2, 3, 4, 4)
    with torch.no_grad():
        args = (x, bn.weight, bn.bias, bn.running_mean, bn.running_var, False, 0.1, 1e-5)
        func, new_args, kwargs, results_of, _ = _cuda_kernels.as_graph_op(
            aten.cudnn_batch_norm.default, args, {})
        assert func is aten.native_batch_norm.default
        torch.testing.assert_close(func(*new_args, **kwargs)[0], bn(x))
    out, mean, invstd = results_of((bn(x), torch.zeros(3), torch.zeros(3), torch.zeros(0)))
    assert tuple(mean.shape) == (0,) and tuple(invstd.shape) == (0,)


def test_calls_whose_other_outputs_matter_stay_as_they_are():
    q, k, v = qkv()
    kernel = aten._scaled_dot_product_efficient_attention.default
    assert _cuda_kernels.as_graph_op(kernel, (q, k, v, None, False, 0.1), {}) is None
    qg, kg, vg = qkv(requires_grad=True)
    # dropout under autograd, a mask that gets a gradient
    assert _cuda_kernels.as_graph_op(kernel, (qg, kg, vg, None, True, 0.1), {}) is None
    mask = torch.randn(2, 4, 16, 16, requires_grad=True)
    assert _cuda_kernels.as_graph_op(kernel, (qg, kg, vg, mask, True), {}) is None
    bn = torch.nn.BatchNorm2d(3)
    training = (torch.randn(2, 3, 4, 4), bn.weight, bn.bias, bn.running_mean, bn.running_var,
                True, 0.1, 1e-5)
    assert _cuda_kernels.as_graph_op(aten.cudnn_batch_norm.default, training, {}) is None
    assert _cuda_kernels.as_graph_op(aten.mm.default, (q, k), {}) is None
