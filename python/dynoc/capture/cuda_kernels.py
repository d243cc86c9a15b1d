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
"""
import torch

aten = torch.ops.aten
_ATTENTION = ("aten::_scaled_dot_product_efficient_attention",
              "aten::_scaled_dot_product_flash_attention",
              "aten::_scaled_dot_product_cudnn_attention")


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


def as_graph_op(func, args, kwargs):
    """For a CUDA kernel's call that can be recorded as a dialect op: (that
    op, its args, its kwargs, the graph op's results made from the kernel's
    outputs: a function of them); else None."""
    name = func._schema.name
    if name in _ATTENTION:
        b = _bind(func, args, kwargs)
        q, k, v, mask = b["query"], b["key"], b["value"], b.get("attn_bias")
        if b.get("dropout_p", 0.0) != 0.0 or _needs_grad(q, k, v, mask):
            return None
        # The log-sum-exp stand-in (meta) has the shape the dialect's op gives
        # it, (batch..., heads, query length) in float32.
        return (aten._scaled_dot_product_flash_attention_for_cpu.default,
                (q, k, v, 0.0, bool(b.get("is_causal", False))),
                {"attn_mask": mask, "scale": b.get("scale")},
                lambda out: (out[0], _stand_in(q.shape[:-1])))
    if name == "aten::cudnn_batch_norm":
        b = _bind(func, args, kwargs)
        operands = [b[n] for n in ("input", "weight", "bias", "running_mean", "running_var")]
        if b["training"] or _needs_grad(*operands):
            return None
        # Not training, native_batch_norm's saved mean and inverse std are
        # empty.
        return (aten.native_batch_norm.default,
                (*operands, False, b["exponential_average_factor"], b["epsilon"]), {},
                lambda out: (out[0], _stand_in((0,)), _stand_in((0,))))
    return None


def _stand_in(shape):
    """A result no recorded op reads: its shape and dtype only (meta)."""
    return torch.empty(shape, dtype=torch.float32, device="meta")
