"""CUDA's fused attention kernels are recorded as the dialect's attention op
(_fused_attention.py). The GPU run is test/gpu/test_jit_cuda.py; here, on the
CPU, the rewrite itself: each kernel's call, as a GPU region makes it, turns
into a call of the dialect's op that computes the same attention, and the
calls whose other outputs could matter are left as they are."""
import pytest
import torch

from dynoc import _fused_attention

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
def test_a_fused_kernel_becomes_the_attention_op_with_the_same_result(kernel, make_args, causal):
    q, k, v = qkv()
    mask = None if causal or kernel is aten._scaled_dot_product_flash_attention.default \
        else torch.randn(2, 4, 16, 16)
    args, kwargs = make_args(q, k, v, mask, causal)
    func, new_args, new_kwargs = _fused_attention.as_graph_op(kernel, args, kwargs)
    assert func is aten._scaled_dot_product_flash_attention_for_cpu.default
    got = func(*new_args, **new_kwargs)[0]
    want = torch.nn.functional.scaled_dot_product_attention(
        q, k, v, attn_mask=mask, is_causal=causal, scale=0.3)
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)


def test_calls_whose_other_outputs_matter_stay_as_they_are():
    q, k, v = qkv()
    kernel = aten._scaled_dot_product_efficient_attention.default
    assert _fused_attention.as_graph_op(kernel, (q, k, v, None, False, 0.1), {}) is None
    qg, kg, vg = qkv(requires_grad=True)
    assert _fused_attention.as_graph_op(kernel, (qg, kg, vg, None, True), {}) is None
    assert _fused_attention.as_graph_op(aten.mm.default, (q, k), {}) is None


def test_the_log_sum_exp_stand_in_has_the_attention_ops_shape():
    q, k, v = qkv()
    out = (torch.zeros(2, 4, 16, 8), torch.zeros(2, 4, 32), torch.zeros(()), torch.zeros(()))
    attn, lse = _fused_attention.graph_results(out, q)
    assert attn is out[0]
    assert lse.device.type == "meta" and tuple(lse.shape) == (2, 4, 16)
    assert lse.dtype == torch.float32
