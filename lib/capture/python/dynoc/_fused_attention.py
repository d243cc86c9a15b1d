"""CUDA's fused attention kernels as the graph's attention op.

On a GPU, `F.scaled_dot_product_attention` dispatches to one of CUDA's fused
kernels (`_scaled_dot_product_efficient_attention`, `_flash_attention`,
`_cudnn_attention`), each with outputs only its own backward reads (random
seeds, cumulative lengths, a log-sum-exp padded to its tile). The dialect
has one attention op, `aten._scaled_dot_product_flash_attention_for_cpu`
(the name ATen gives it on the CPU; both targets build it): attention plus
the log-sum-exp per query row. A fused kernel's call is recorded as that op
when nothing could need its other outputs: no dropout and no input that
requires grad (a backward would read them). The call replayed on the
recording's tensors (dynamic shapes, GraphModules) stays the kernel's own.
"""
import torch

_KERNELS = ("aten::_scaled_dot_product_efficient_attention",
            "aten::_scaled_dot_product_flash_attention",
            "aten::_scaled_dot_product_cudnn_attention")


def as_graph_op(func, args, kwargs):
    """For a fused attention kernel's call that can be recorded as the
    dialect's attention op: (that op, its args, its kwargs); else None."""
    if func._schema.name not in _KERNELS:
        return None
    bound = {}
    for i, a in enumerate(func._schema.arguments):
        if not a.kwarg_only and i < len(args):
            bound[a.name] = args[i]
        elif a.name in kwargs:
            bound[a.name] = kwargs[a.name]
        elif a.has_default_value():
            bound[a.name] = a.default_value
    q, k, v = bound["query"], bound["key"], bound["value"]
    mask = bound.get("attn_bias")
    if bound.get("dropout_p", 0.0) != 0.0 or \
            any(t is not None and t.requires_grad for t in (q, k, v, mask)):
        return None
    return (torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default,
            (q, k, v, 0.0, bool(bound.get("is_causal", False))),
            {"attn_mask": mask, "scale": bound.get("scale")})


def graph_results(out, query):
    """The two results the dialect's op has: the kernel's attention output and
    a stand-in (on the meta device) of the log-sum-exp's shape as that op
    gives it, (batch..., heads, query length) in float32."""
    lse = torch.empty(query.shape[:-1], dtype=torch.float32, device="meta")
    return (out[0], lse)
