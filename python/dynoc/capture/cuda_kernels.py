"""CUDA-only ATen kernels recorded as the dialect's ops.

On a GPU some calls dispatch below the op the CPU records, to kernels of
their own: `F.scaled_dot_product_attention` to one of CUDA's fused attention
kernels (`_scaled_dot_product_efficient_attention`, `_flash_attention`,
`_cudnn_attention`), a BatchNorm to `cudnn_batch_norm`. Each has outputs
only its own backward reads (random seeds, a padded log-sum-exp, cuDNN's
reserve space). When nothing could need those (no dropout, no input that
requires grad, a BatchNorm not training), the call is recorded as the op
the dialect has for it, which both targets build:
`aten._scaled_dot_product_flash_attention_for_cpu` (the name ATen gives it
on the CPU: attention plus the log-sum-exp per query row) and
`aten.native_batch_norm`. The call replayed on the recording's tensors
(dynamic shapes, GraphModules) stays the kernel's own.

Attention that autograd differentiates (no dropout, a mask that needs no
gradient) is recorded so too, and its backward kernel
(`_scaled_dot_product_efficient_attention_backward`, ...) as the dialect's
`_scaled_dot_product_flash_attention_for_cpu_backward`: the kernel's own
log-sum-exp tensor (padded to 32 rows by the efficient kernel), which the
backward is handed, stands for the dialect op's (batch, heads, L) result. The
CUDA target computes that backward from the scores, not from the log-sum-exp
(dynoc-decompose's attention-backward).
"""
import torch

aten = torch.ops.aten
_ATTENTION = ("aten::_scaled_dot_product_efficient_attention",
              "aten::_scaled_dot_product_flash_attention",
              "aten::_scaled_dot_product_cudnn_attention")
_ATTENTION_BACKWARD = ("aten::_scaled_dot_product_efficient_attention_backward",
                       "aten::_scaled_dot_product_flash_attention_backward",
                       "aten::_scaled_dot_product_cudnn_attention_backward")


def _bind(func, args, kwargs):
    """{argument name: value} of a call, defaults filled in."""
    bound = {}
    for i, a in enumerate(func._schema.arguments):
        if not a.kwarg_only and i < len(args):
            bound[a.name] = args[i]
        elif a.name in kwargs:
            bound[a.name] = kwargs[a.name]
        elif a.has_default_value():
            bound[a.name] = a.default_value
    return bound


def _needs_grad(*tensors):
    """Could autograd record a backward of the call (grad mode on, an input
    that requires grad)?"""
    return torch.is_grad_enabled() and \
        any(isinstance(t, torch.Tensor) and t.requires_grad for t in tensors)


def _no_kept(out):
    return ()


def as_graph_op(func, args, kwargs):
    """For a CUDA kernel's call that can be recorded as a dialect op: (that
    op, its args, its kwargs, the graph op's results made from the kernel's
    outputs: a function of them, and the kernel's outputs that stand for a
    result: a function of the outputs giving (tensor, result index) pairs;
    the others only the kernel's backward reads); else None."""
    name = func._schema.name
    if name in _ATTENTION:
        b = _bind(func, args, kwargs)
        q, k, v, mask = b["query"], b["key"], b["value"], b.get("attn_bias")
        if b.get("dropout_p", 0.0) != 0.0 or \
                (isinstance(mask, torch.Tensor) and _needs_grad(mask)):
            return None
        # The log-sum-exp stand-in (meta) has the shape the dialect's op gives
        # it, (batch..., heads, query length) in float32; where a backward
        # may read the kernel's own, that one stands for it.
        kept = (lambda out: ((out[1], 1),)) if _needs_grad(q, k, v) else _no_kept
        return (aten._scaled_dot_product_flash_attention_for_cpu.default,
                (q, k, v, 0.0, bool(b.get("is_causal", False))),
                {"attn_mask": mask, "scale": b.get("scale")},
                lambda out: (out[0], _stand_in(q.shape[:-1])), kept)
    if name in _ATTENTION_BACKWARD:
        b = _bind(func, args, kwargs)
        mask = b.get("attn_bias")
        wants = b.get("grad_input_mask")
        if b.get("dropout_p", 0.0) != 0.0 or (wants is not None and len(wants) > 3 and
                                              wants[3] and mask is not None):
            return None
        return (aten._scaled_dot_product_flash_attention_for_cpu_backward.default,
                (b["grad_out"] if "grad_out" in b else b["grad_out_"], b["query"], b["key"],
                 b["value"], b["out"], b["logsumexp"], 0.0, bool(b.get("is_causal", False))),
                {"attn_mask": mask, "scale": b.get("scale")},
                lambda out: tuple(out[:3]), _no_kept)
    if name == "aten::cudnn_batch_norm":
        b = _bind(func, args, kwargs)
        operands = [b[n] for n in ("input", "weight", "bias", "running_mean", "running_var")]
        if b["training"] or _needs_grad(*operands):
            return None
        # Not training, native_batch_norm's saved mean and inverse std are
        # empty.
        return (aten.native_batch_norm.default,
                (*operands, False, b["exponential_average_factor"], b["epsilon"]), {},
                lambda out: (out[0], _stand_in((0,)), _stand_in((0,))), _no_kept)
    return None


def _stand_in(shape):
    """A result no recorded op reads: its shape and dtype only (meta)."""
    return torch.empty(shape, dtype=torch.float32, device="meta")
