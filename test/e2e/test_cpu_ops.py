"""Randomized tests of each op the CPU backend compiles: random shapes (seeded)
with broadcasting, negative dims and zero-size dims, built at -O0 (one kernel per
op) and -O2 (the fusion passes), run through dynoc.load and compared with the ATen
op itself. float32 throughout; float64, int64 and bool where the op takes them
(comparisons, selection, indexing, arithmetic); and every float32 case again in
bfloat16 and float16 (at -O2), compared with ATen's own op in that dtype within
torch's tolerances for it (one rounding of each op's result)."""
import os
import subprocess
import zlib

import numpy as np
import pytest
import torch

from conftest import DYNOC

aten = torch.ops.aten


def ty(shape, dtype="f32"):
    return "tensor<" + "".join(f"{d}x" for d in shape) + dtype + ">"


def case(op, inputs, attrs, ref, segments=None):
    """One graph: `op` on user inputs of the given shapes."""
    return dict(op=op, inputs=inputs, attrs=attrs, ref=ref, segments=segments)


def attr_text(attrs):
    out = []
    for k, v in attrs.items():
        if isinstance(v, bool):
            out.append(f"{k} = {'true' if v else 'false'}")
        elif isinstance(v, int):
            out.append(f"{k} = {v} : i64")
        elif isinstance(v, float):
            out.append(f"{k} = {v:.9e} : f64")
        elif k == "dtype":  # a type attribute
            out.append(f"dtype = {v}")
        elif isinstance(v, str):
            out.append(f'{k} = "{v}"')
        elif isinstance(v, list):
            out.append(f"{k} = array<i64" + (": " + ", ".join(map(str, v)) if v else "") + ">")
    return "{" + ", ".join(out) + "}" if out else ""


def write_graph(path, c, out_shape, out_dtype="f32"):
    dtypes = c.get("dtypes", ["f32"] * len(c["inputs"]))
    args = ", ".join(f"%a{i}: {ty(s, dtypes[i])}" for i, s in enumerate(c["inputs"]))
    names = ", ".join(f'{{kind = "user", name = "x{i}"}}' for i in range(len(c["inputs"])))
    attrs = dict(c["attrs"])
    if c["segments"]:
        attrs["operand_segment_sizes"] = None
    text = attr_text({k: v for k, v in attrs.items() if v is not None})
    if c["segments"]:
        seg = f"operand_segment_sizes = array<i32: {', '.join(map(str, c['segments']))}>"
        text = "{" + (text[1:-1] + ", " if text else "") + seg + "}"
    operands = ", ".join(f"%a{i}" for i in range(len(c["inputs"])))
    results = c.get("results", 1)
    res_types = [ty(out_shape, out_dtype)] + [ty([0])] * (results - 1)
    lhs = "%r" if results == 1 else ", ".join(["%r"] + [f"%u{i}" for i in range(results - 1)])
    path.write_text(
        f"func.func @g({args}) -> {ty(out_shape, out_dtype)} attributes "
        f"{{dynoc.inputs = [{names}]}} {{\n"
        f"  {lhs} = \"{c['op']}\"({operands}) {text} : "
        f"({', '.join(ty(s, dtypes[i]) for i, s in enumerate(c['inputs']))}) -> "
        f"({', '.join(res_types)})\n"
        f"  return %r : {ty(out_shape, out_dtype)}\n}}\n")


def rand(rng, shape, positive=False):
    t = torch.from_numpy(rng.standard_normal(shape).astype(np.float32))
    return t.abs() + 0.1 if positive else t


CASES = {}
for name, fn in [("relu", aten.relu), ("sigmoid", aten.sigmoid), ("tanh", aten.tanh),
                 ("neg", aten.neg), ("exp", aten.exp), ("silu", aten.silu), ("abs", aten.abs)]:
    for shape in ([3, 17], [2, 0, 5], []):
        CASES[f"{name}{shape}"] = case(f"aten.{name}", [shape], {}, fn)
CASES["sqrt"] = case("aten.sqrt", [[4, 9]], {}, aten.sqrt)
CASES["rsqrt"] = case("aten.rsqrt", [[4, 9]], {}, aten.rsqrt)
CASES["erf"] = case("aten.erf", [[4, 9]], {}, aten.erf)
CASES["gelu"] = case("aten.gelu", [[5, 33]], {}, aten.gelu)
CASES["gelu_tanh"] = case("aten.gelu", [[5, 33]], {"approximate": "tanh"},
                          lambda x: aten.gelu(x, approximate="tanh"))
for name, fn in [("add.Tensor", aten.add.Tensor), ("sub.Tensor", aten.sub.Tensor),
                 ("mul.Tensor", aten.mul.Tensor), ("div.Tensor", aten.div.Tensor),
                 ("maximum", aten.maximum), ("minimum", aten.minimum)]:
    for a, b in (([4, 1, 5], [3, 1]), ([0, 3], [3]), ([2, 3], [2, 3]), ([], [6])):
        CASES[f"{name}{a}{b}"] = case(f"aten.{name}", [a, b], {}, fn)
CASES["add_alpha"] = case("aten.add.Tensor", [[3, 4], [4]], {"alpha": 2.5},
                          lambda a, b: aten.add.Tensor(a, b, alpha=2.5))
for name, fn in [("add.Scalar", aten.add.Scalar), ("mul.Scalar", aten.mul.Scalar),
                 ("sub.Scalar", aten.sub.Scalar), ("div.Scalar", aten.div.Scalar)]:
    CASES[name] = case(f"aten.{name}", [[3, 5]], {"other": 1.5}, lambda x, f=fn: f(x, 1.5))
CASES["mm"] = case("aten.mm", [[5, 7], [7, 3]], {}, aten.mm)
CASES["mm_zero"] = case("aten.mm", [[0, 7], [7, 3]], {}, aten.mm)
CASES["addmm"] = case("aten.addmm", [[3], [5, 7], [7, 3]], {"beta": 0.5, "alpha": 2.0},
                      lambda b, x, y: aten.addmm(b, x, y, beta=0.5, alpha=2.0))
CASES["linear"] = case("aten.linear", [[2, 4, 6], [5, 6], [5]], {}, aten.linear)
CASES["bmm"] = case("aten.bmm", [[3, 4, 5], [3, 5, 2]], {}, aten.bmm)
# Large enough for oneDNN's blocked kernels (their bf16/f16 forms too).
CASES["mm_large"] = case("aten.mm", [[67, 130], [130, 45]], {}, aten.mm)
CASES["linear_large"] = case("aten.linear", [[3, 33, 96], [80, 96], [80]], {}, aten.linear)
CASES["bmm_large"] = case("aten.bmm", [[6, 40, 64], [6, 64, 24]], {}, aten.bmm)
# Bloom's attention scores: an ALiBi bias plus the scaled q @ k (decomposed).
# Built through dynoc-decompose, which runs from -O1: tested at -O2 only.
CASES["baddbmm"] = dict(case("aten.baddbmm", [[3, 1, 2], [3, 4, 5], [3, 5, 2]],
                             {"beta": 1.0, "alpha": 0.25},
                             lambda s, a, b: aten.baddbmm(s, a, b, beta=1.0, alpha=0.25)),
                        decomposed=True)
CASES["baddbmm_beta0"] = dict(case("aten.baddbmm", [[3, 4, 2], [3, 4, 5], [3, 5, 2]],
                                   {"beta": 0.0},
                                   lambda s, a, b: aten.baddbmm(s, a, b, beta=0.0)),
                              decomposed=True)
CASES["transpose_neg"] = case("aten.transpose.int", [[2, 3, 4]], {"dim0": -1, "dim1": 0},
                              lambda x: aten.transpose.int(x, -1, 0).contiguous())
CASES["permute"] = case("aten.permute", [[2, 3, 4, 5]], {"dims": [3, 1, 0, 2]},
                        lambda x: aten.permute(x, [3, 1, 0, 2]).contiguous())
CASES["softmax_last"] = case("aten._softmax", [[3, 4, 9]], {"dim": -1, "half_to_float": False},
                             lambda x: aten._softmax(x, -1, False))
CASES["softmax_mid"] = case("aten._softmax", [[3, 4, 9]], {"dim": 1, "half_to_float": False},
                            lambda x: aten._softmax(x, 1, False))
CASES["log_softmax"] = case("aten._log_softmax", [[3, 7]], {"dim": 0, "half_to_float": False},
                            lambda x: aten._log_softmax(x, 0, False))
CASES["layer_norm"] = dict(
    case("aten.native_layer_norm", [[2, 3, 8], [3, 8], [3, 8]],
         {"normalized_shape": [3, 8], "eps": 1e-5},
         lambda x, w, b: aten.native_layer_norm(x, [3, 8], w, b, 1e-5)[0], segments=[1, 1, 1]),
    results=3)
# GroupNorm (wav2vec2, PoolFormer): built through dynoc-decompose (-O2).
CASES["group_norm"] = dict(
    case("aten.native_group_norm", [[2, 6, 5, 3], [6], [6]],
         {"N_": 2, "C_": 6, "HxW_": 15, "group": 3, "eps": 1e-5},
         lambda x, w, b: aten.native_group_norm(x, w, b, 2, 6, 15, 3, 1e-5)[0],
         segments=[1, 1, 1]),
    results=3, decomposed=True)
# Average pooling (Funnel, EfficientNet, PoolFormer): ceil_mode's last
# window in the padding, padding left out of the divisor, a divisor given.
CASES["avg_pool_ceil"] = case(
    "aten.avg_pool2d", [[2, 3, 7, 5]], {"kernel_size": [2, 2], "stride": [2, 2],
                                        "ceil_mode": True},
    lambda x: aten.avg_pool2d(x, [2, 2], [2, 2], [0, 0], True))
CASES["avg_pool_pad_exclude"] = case(
    "aten.avg_pool2d", [[1, 2, 6, 6]], {"kernel_size": [3, 3], "stride": [1, 1],
                                        "padding": [1, 1], "count_include_pad": False},
    lambda x: aten.avg_pool2d(x, [3, 3], [1, 1], [1, 1], False, False))
CASES["avg_pool_divisor"] = case(
    "aten.avg_pool2d", [[1, 2, 4, 6]], {"kernel_size": [2, 3], "padding": [1, 1],
                                        "divisor_override": 4},
    lambda x: aten.avg_pool2d(x, [2, 3], [], [1, 1], False, True, 4))
CASES["conv_stride_pad_dil"] = case(
    "aten.convolution", [[2, 3, 11, 9], [4, 3, 3, 2], [4]],
    {"stride": [2, 1], "padding": [1, 2], "dilation": [1, 2], "transposed": False,
     "output_padding": [0, 0], "groups": 1},
    lambda x, w, b: aten.convolution(x, w, b, [2, 1], [1, 2], [1, 2], False, [0, 0], 1))
CASES["conv_groups"] = case(
    "aten.convolution", [[1, 4, 6, 6], [6, 2, 3, 3]],
    {"stride": [1, 1], "padding": [0, 0], "dilation": [1, 1], "transposed": False,
     "output_padding": [0, 0], "groups": 2},
    lambda x, w: aten.convolution(x, w, None, [1, 1], [0, 0], [1, 1], False, [0, 0], 2))
# ResNeXt's shape of group (4 input and 4 output channels, a 3x3 window with
# padding, a bias; rows over two of the CUDA stencil's 8-row tiles), and
# groups of 9 input channels (past the stencil's limit: cuDNN on the GPU).
CASES["conv_groups_resnext"] = case(
    "aten.convolution", [[2, 16, 12, 7], [16, 4, 3, 3], [16]],
    {"stride": [1, 1], "padding": [1, 1], "dilation": [1, 1], "transposed": False,
     "output_padding": [0, 0], "groups": 4},
    lambda x, w, b: aten.convolution(x, w, b, [1, 1], [1, 1], [1, 1], False, [0, 0], 4))
CASES["conv_groups_wide"] = case(
    "aten.convolution", [[1, 18, 6, 5], [4, 9, 3, 3]],
    {"stride": [1, 1], "padding": [1, 1], "dilation": [1, 1], "transposed": False,
     "output_padding": [0, 0], "groups": 2},
    lambda x, w: aten.convolution(x, w, None, [1, 1], [1, 1], [1, 1], False, [0, 0], 2))
# 1x1 and depthwise convolutions run as NCHW kernels of their own (a GEMM per
# image, a stencil per channel): a bias, a channel multiplier, row strides,
# uneven padding and dilation, a 5x5 kernel.
CASES["conv_pointwise"] = case(
    "aten.convolution", [[2, 5, 6, 7], [3, 5, 1, 1], [3]],
    {"stride": [1, 1], "padding": [0, 0], "dilation": [1, 1], "transposed": False,
     "output_padding": [0, 0], "groups": 1},
    lambda x, w, b: aten.convolution(x, w, b, [1, 1], [0, 0], [1, 1], False, [0, 0], 1))
CASES["conv_depthwise"] = case(
    "aten.convolution", [[2, 3, 10, 9], [6, 1, 3, 3], [6]],
    {"stride": [2, 1], "padding": [1, 2], "dilation": [1, 2], "transposed": False,
     "output_padding": [0, 0], "groups": 3},
    lambda x, w, b: aten.convolution(x, w, b, [2, 1], [1, 2], [1, 2], False, [0, 0], 3))
CASES["conv_depthwise_5x5"] = case(
    "aten.convolution", [[1, 4, 7, 3], [4, 1, 5, 5]],
    {"stride": [1, 1], "padding": [2, 2], "dilation": [1, 1], "transposed": False,
     "output_padding": [0, 0], "groups": 4},
    lambda x, w: aten.convolution(x, w, None, [1, 1], [2, 2], [1, 1], False, [0, 0], 4))
# Stride 1: the CUDA target's stencil kernel (a channel multiplier of 2 and
# rows that span three of its 8-row tiles, the last one partial; a 7x7 window).
CASES["conv_depthwise_mult"] = case(
    "aten.convolution", [[2, 4, 19, 11], [8, 1, 3, 3], [8]],
    {"stride": [1, 1], "padding": [1, 1], "dilation": [1, 1], "transposed": False,
     "output_padding": [0, 0], "groups": 4},
    lambda x, w, b: aten.convolution(x, w, b, [1, 1], [1, 1], [1, 1], False, [0, 0], 4))
CASES["conv_depthwise_7x7"] = case(
    "aten.convolution", [[1, 3, 12, 10], [3, 1, 7, 7]],
    {"stride": [1, 1], "padding": [3, 3], "dilation": [1, 1], "transposed": False,
     "output_padding": [0, 0], "groups": 3},
    lambda x, w: aten.convolution(x, w, None, [1, 1], [3, 3], [1, 1], False, [0, 0], 3))
CASES["max_pool"] = dict(case(
    "aten.max_pool2d_with_indices", [[2, 3, 9, 8]],
    {"kernel_size": [3, 2], "stride": [2, 2], "padding": [1, 1]},
    lambda x: aten.max_pool2d_with_indices(x, [3, 2], [2, 2], [1, 1])[0]), results=2)
CASES["max_pool_2x2"] = dict(case(
    "aten.max_pool2d_with_indices", [[2, 3, 8, 8]], {"kernel_size": [2, 2]},
    lambda x: aten.max_pool2d_with_indices(x, [2, 2])[0]), results=2)
CASES["batch_norm"] = dict(case(
    "aten.native_batch_norm", [[2, 3, 4, 5], [3], [3], [3], [3]],
    {"training": False, "momentum": 0.1, "eps": 1e-5},
    lambda x, w, b, m, v: aten.native_batch_norm(x, w, b, m, v, False, 0.1, 1e-5)[0],
    segments=[1, 1, 1, 1, 1]),
    results=3, positive=[4])
CASES["expand"] = case("aten.expand", [[3, 1]], {"size": [2, 3, 4]},
                       lambda x: aten.expand(x, [2, 3, 4]).contiguous())
CASES["embedding"] = dict(case("aten.embedding", [[10, 4], [2, 3]], {},
                               lambda w, i: aten.embedding(w, i)),
                          dtypes=["f32", "i64"], ints={1: 10})
CASES["gather"] = dict(case("aten.gather", [[3, 5], [3, 4]], {"dim": 1},
                            lambda x, i: aten.gather(x, 1, i)),
                       dtypes=["f32", "i64"], ints={1: 5})
CASES["cat"] = case("aten.cat", [[2, 3, 4], [2, 1, 4], [2, 0, 4]], {"dim": -2},
                    lambda a, b, c: aten.cat([a, b, c], -2))
CASES["slice"] = case("aten.slice.Tensor", [[4, 10, 3]],
                      {"dim": 1, "start": -8, "end": 9, "step": 3},
                      lambda x: aten.slice.Tensor(x, 1, -8, 9, 3).contiguous())
# Padding before and after, a cropped dim (a negative pad) and a fill value:
# the slice_backward of a Llama's rotary halves.
# The kernels' row-at-a-time paths: a slice of the last dim (unit step and
# strided), a pad and crop of the last dim on a 4-D tensor, a permute and a
# transpose whose planes take the tiled path (both dims of a plane >= 8), a
# broadcast of a last dim of 1, a log-softmax over contiguous rows.
CASES["slice_last_dim"] = case("aten.slice.Tensor", [[3, 4, 20]],
                               {"dim": 2, "start": 3, "end": 17, "step": 1},
                               lambda x: aten.slice.Tensor(x, 2, 3, 17, 1).contiguous())
CASES["slice_last_dim_step"] = case("aten.slice.Tensor", [[3, 20]],
                                    {"dim": 1, "start": 1, "end": 20, "step": 4},
                                    lambda x: aten.slice.Tensor(x, 1, 1, 20, 4).contiguous())
CASES["constant_pad_last_dims"] = case(
    "aten.constant_pad_nd", [[2, 3, 4, 9]], {"pad": [-2, 3, 1, -1, 0, 2], "value": -1.5},
    lambda x: aten.constant_pad_nd(x, [-2, 3, 1, -1, 0, 2], -1.5))
CASES["permute_tiled"] = case("aten.permute", [[2, 37, 5, 41]], {"dims": [0, 3, 2, 1]},
                              lambda x: aten.permute(x, [0, 3, 2, 1]).contiguous())
CASES["transpose_tiled"] = case("aten.transpose.int", [[70, 33]], {"dim0": 0, "dim1": 1},
                                lambda x: aten.transpose.int(x, 0, 1).contiguous())
CASES["expand_last_dim"] = case("aten.expand", [[4, 1, 3, 1]], {"size": [4, 5, 3, 6]},
                                lambda x: aten.expand(x, [4, 5, 3, 6]).contiguous())
CASES["log_softmax_rows"] = case("aten._log_softmax", [[5, 300]],
                                 {"dim": 1, "half_to_float": False},
                                 lambda x: aten._log_softmax(x, 1, False))
# An embedding's gradient: repeated indices and the padding index (0).
CASES["embedding_dense_backward"] = dict(case(
    "aten.embedding_dense_backward", [[2, 5, 70], [2, 5]],
    {"num_weights": 11, "padding_idx": 0, "scale_grad_by_freq": False},
    lambda g, i: aten.embedding_dense_backward(g, i, 11, 0, False)),
    dtypes=["f32", "i64"], ints={1: 11})
CASES["constant_pad"] = case("aten.constant_pad_nd", [[2, 3, 5]],
                             {"pad": [1, 2, -1, 1], "value": 0.5},
                             lambda x: aten.constant_pad_nd(x, [1, 2, -1, 1], 0.5))
CASES["select"] = case("aten.select.int", [[4, 5, 3]], {"dim": -2, "index": -1},
                       lambda x: aten.select.int(x, -2, -1).contiguous())
CASES["pow3"] = case("aten.pow.Tensor_Scalar", [[4, 7]], {"exponent": 3.0},
                     lambda x: aten.pow.Tensor_Scalar(x, 3.0))
CASES["pow_frac"] = dict(case("aten.pow.Tensor_Scalar", [[4, 7]], {"exponent": 1.7},
                              lambda x: aten.pow.Tensor_Scalar(x, 1.7)), positive=[0])
CASES["add_int64"] = dict(case("aten.add.Tensor", [[6], []], {},
                               lambda a, b: aten.add.Tensor(a, b)),
                          dtypes=["i64", "i64"], ints={0: 100, 1: 100})
for causal in (False, True):
    CASES[f"attention_causal{causal}"] = dict(case(
        "aten._scaled_dot_product_flash_attention_for_cpu", [[2, 3, 5, 8], [2, 3, 7, 8],
                                                             [2, 3, 7, 8]],
        {"dropout_p": 0.0, "is_causal": causal},
        lambda q, k, v, c=causal: torch.nn.functional.scaled_dot_product_attention(
            q, k, v, is_causal=c)), results=2)
# Grouped-query attention: key/value heads each shared by 4 or 8 query heads
# (torch's enable_gqa, what the CPU and CUDA kernels record), causal and with
# an additive mask broadcast over batch and heads.
for q_heads, kv_heads, causal in ((16, 4, True), (8, 1, False), (32, 4, True)):
    CASES[f"attention_gqa{q_heads}_{kv_heads}_causal{causal}"] = dict(case(
        "aten._scaled_dot_product_flash_attention_for_cpu",
        [[2, q_heads, 9, 64], [2, kv_heads, 11, 64], [2, kv_heads, 11, 64]],
        {"dropout_p": 0.0, "is_causal": causal},
        lambda q, k, v, c=causal: torch.nn.functional.scaled_dot_product_attention(
            q, k, v, is_causal=c, enable_gqa=True)), results=2)
CASES["attention_gqa_mask"] = dict(case(
    "aten._scaled_dot_product_flash_attention_for_cpu",
    [[2, 12, 6, 32], [2, 3, 6, 32], [2, 3, 6, 32], [1, 1, 6, 6]],
    {"dropout_p": 0.0, "is_causal": False},
    lambda q, k, v, m: torch.nn.functional.scaled_dot_product_attention(
        q, k, v, attn_mask=m, enable_gqa=True)), results=2)
# tril/triu (the causal mask of SDPA's math path): decomposed, so -O2 only.
for name, diagonal in (("tril", 0), ("tril", -2), ("triu", 1), ("triu", 0)):
    CASES[f"{name}_{diagonal}"] = dict(case(
        f"aten.{name}", [[2, 5, 7]], {"diagonal": diagonal},
        lambda x, f=getattr(aten, name), d=diagonal: f(x, d)), decomposed=True)
CASES["tril_i64"] = dict(case("aten.tril", [[6, 6]], {}, aten.tril), dtypes=["i64"],
                         decomposed=True)
# cumsum: position ids from a mask (bool and int64 in, int64 out), floats.
# (Its bf16/f16 variants against the sum in float32 rounded once, as dynoc
# computes it: ATen's CUDA scan sums in the reduced type, an ulp of the
# running sum away.)
CASES["cumsum_mid"] = case("aten.cumsum", [[4, 5, 3]], {"dim": 1},
                           lambda x: aten.cumsum(x.float(), 1).to(x.dtype))
CASES["cumsum_i64"] = dict(case("aten.cumsum", [[3, 7]], {"dim": -1},
                                lambda x: aten.cumsum(x, -1)), dtypes=["i64"])
CASES["cumsum_bool"] = dict(case("aten.cumsum", [[2, 9]], {"dim": 1},
                                 lambda x: aten.cumsum(x, 1)), dtypes=["i1"])
for name in ("sin", "cos"):
    CASES[name] = case(f"aten.{name}", [[3, 17]], {}, getattr(aten, name))
CASES["log"] = dict(case("aten.log", [[3, 17]], {}, aten.log), positive=[0])
# The math functions of lib/codegen/include/dynoc/Codegen/UnaryFunctions.def.
for name in ("tan", "atan", "sinh", "asinh", "expm1", "exp2"):
    CASES[name] = case(f"aten.{name}", [[3, 17]], {}, getattr(aten, name))
for name in ("floor", "round", "sign", "mish", "hardsigmoid"):
    CASES[name] = case(f"aten.{name}", [[3, 17]], {}, getattr(aten, name))
CASES["isnan_log"] = dict(case("aten.isnan", [[40]], {}, aten.isnan))  # no NaN: all false
CASES["elu"] = case("aten.elu", [[3, 9]], {"alpha": 0.7, "scale": 1.5, "input_scale": 2.0},
                    lambda x: aten.elu(x, 0.7, 1.5, 2.0))
CASES["softplus"] = case("aten.softplus", [[3, 9]], {"beta": 2.0, "threshold": 1.0},
                         lambda x: aten.softplus(x, 2.0, 1.0))
CASES["threshold"] = case("aten.threshold", [[4, 7]], {"threshold": 0.1, "value": -3.0},
                          lambda x: aten.threshold(x, 0.1, -3.0))
CASES["round_decimals"] = case("aten.round.decimals", [[4, 7]], {"decimals": 2},
                               lambda x: aten.round.decimals(x, decimals=2))
CASES["sign_i64"] = dict(case("aten.sign", [[9]], {}, aten.sign), dtypes=["i64"],
                         ints={0: 3}, negative_index={0: 3})
for name in ("log2", "log10", "log1p"):
    CASES[name] = dict(case(f"aten.{name}", [[3, 17]], {}, getattr(aten, name)),
                       positive=[0])

# Reductions: over all dims, the last, a middle run (keepdim), negative dims, zero size.
CASES["sum_all"] = case("aten.sum", [[5, 7]], {}, lambda x: aten.sum(x))
CASES["sum_last"] = case("aten.sum.dim_IntList", [[3, 4, 9]], {"dim": [-1]},
                         lambda x: aten.sum.dim_IntList(x, [-1]))
CASES["sum_mid_keepdim"] = case("aten.sum.dim_IntList", [[3, 4, 5, 2]],
                                {"dim": [1, 2], "keepdim": True},
                                lambda x: aten.sum.dim_IntList(x, [1, 2], True))
CASES["sum_zero"] = case("aten.sum.dim_IntList", [[3, 0, 2]], {"dim": [1]},
                         lambda x: aten.sum.dim_IntList(x, [1]))
CASES["mean_dim"] = case("aten.mean.dim", [[4, 6, 3]], {"dim": [0]},
                         lambda x: aten.mean.dim(x, [0]))
CASES["mean_all"] = case("aten.mean", [[4, 6]], {}, lambda x: aten.mean(x))
CASES["amax"] = case("aten.amax", [[4, 6, 3]], {"dim": [-2]}, lambda x: aten.amax(x, [-2]))
CASES["amin_keepdim"] = case("aten.amin", [[4, 6]], {"dim": [1], "keepdim": True},
                             lambda x: aten.amin(x, [1], True))
# (dynoc-decompose makes them amax/amin: built at -O2 only)
CASES["max_all"] = dict(case("aten.max", [[4, 6, 3]], {}, lambda x: aten.max(x)), decomposed=True)
CASES["min_all"] = dict(case("aten.min", [[5, 2]], {}, lambda x: aten.min(x)), decomposed=True)
CASES["stack_mid"] = dict(case("aten.stack", [[2, 3], [2, 3], [2, 3]], {"dim": 1},
                               lambda *xs: aten.stack(list(xs), 1)), segments=None)
CASES["stack_neg"] = case("aten.stack", [[4], [4]], {"dim": -1},
                          lambda *xs: aten.stack(list(xs), -1))
CASES["full"] = case("aten.full", [], {"size": [2, 3], "fill_value": 1.5},
                     lambda: aten.full([2, 3], 1.5))
CASES["view"] = case("aten.view", [[4, 6]], {"size": [2, 12]}, lambda x: aten.view(x, [2, 12]))
CASES["arange"] = case("aten.arange", [], {"end": 7},
                       lambda: aten.arange(7))
# Other dtypes: comparisons give bool, where/masked_fill select, argmax and
# index.Tensor give and take int64, f64 runs the arithmetic and math ops.
for cmp in ("eq", "ne", "lt", "le", "gt", "ge"):
    CASES[f"{cmp}_tensor"] = case(f"aten.{cmp}.Tensor", [[3, 4], [4]], {},
                                  getattr(aten, cmp).Tensor)
    CASES[f"{cmp}_scalar"] = case(f"aten.{cmp}.Scalar", [[5, 3]], {"other": 0.25},
                                  lambda x, f=getattr(aten, cmp).Scalar: f(x, 0.25))
CASES["gt_int_vs_float"] = dict(case("aten.gt.Tensor", [[6], []], {},
                                     aten.gt.Tensor), dtypes=["i64", "f32"], ints={0: 5})
CASES["eq_int_scalar"] = dict(case("aten.eq.Scalar", [[2, 7]], {"other": 3},
                                   lambda x: aten.eq.Scalar(x, 3)), dtypes=["i64"],
                              ints={0: 5})
CASES["ge_f64_zero_size"] = dict(case("aten.ge.Tensor", [[0, 3], [3]], {},
                                      aten.ge.Tensor), dtypes=["f64", "f64"])
# Reductions in every dtype: integer sums exact in int64 (a bool or int32 sum
# is int64), a sum with a dtype, products, f64 softmax.
CASES["sum_i64"] = dict(case("aten.sum.dim_IntList", [[4, 6]], {"dim": [1]},
                             lambda x: aten.sum.dim_IntList(x, [1])), dtypes=["i64"],
                        ints={0: 1000})
CASES["sum_bool"] = dict(case("aten.sum", [[5, 3]], {}, aten.sum), dtypes=["i1"])
CASES["sum_dtype_f64"] = case("aten.sum.dim_IntList", [[3, 8]], {"dim": [0], "dtype": "f64"},
                              lambda x: aten.sum.dim_IntList(x, [0], dtype=torch.float64))
CASES["amax_i8"] = dict(case("aten.amax", [[4, 5]], {"dim": [0]},
                             lambda x: aten.amax(x, [0])), dtypes=["i8"])
CASES["prod_dim"] = case("aten.prod.dim_int", [[3, 4, 2]], {"dim": 1},
                         lambda x: aten.prod.dim_int(x, 1))
CASES["prod_i64"] = dict(case("aten.prod", [[7]], {}, aten.prod), dtypes=["i64"],
                         ints={0: 9}, nonzero=[0])
CASES["softmax_f64"] = dict(case("aten._softmax", [[3, 6]], {"dim": 1, "half_to_float": False},
                                 lambda x: aten._softmax(x, 1, False)), dtypes=["f64"])
CASES["log_softmax_f64_mid"] = dict(case("aten._log_softmax", [[3, 4, 5]],
                                         {"dim": 1, "half_to_float": False},
                                         lambda x: aten._log_softmax(x, 1, False)),
                                    dtypes=["f64"])
# The scatter family (EmitScatter.cpp; indices with repeats: eager's order
# decides which write wins, and the kernel keeps it) and the ops decomposed
# into index.Tensor, slices, views and maximum/minimum.
CASES["scatter_src"] = dict(case("aten.scatter.src", [[4, 5], [3, 5], [4, 6]], {"dim": 0},
                                 lambda x, i, s: aten.scatter.src(x, 0, i, s)),
                            dtypes=["f32", "i64", "f32"], ints={1: 4})
CASES["scatter_value"] = dict(case("aten.scatter.value", [[4, 5], [4, 2]],
                                   {"dim": 1, "value": -2.5},
                                   lambda x, i: aten.scatter.value(x, 1, i, -2.5)),
                              dtypes=["f32", "i64"], ints={1: 5})
CASES["scatter_add_i32"] = dict(case("aten.scatter_add", [[6], [9], [9]], {"dim": 0},
                                     lambda x, i, s: aten.scatter_add(x, 0, i, s)),
                                dtypes=["i64", "i64", "i64"], ints={0: 50, 1: 6, 2: 50})
for reduce, include in (("sum", True), ("prod", False), ("mean", True), ("mean", False),
                        ("amax", False), ("amin", True)):
    CASES[f"scatter_reduce_{reduce}_{include}"] = dict(case(
        "aten.scatter_reduce.two", [[3, 4], [3, 6], [3, 6]],
        {"dim": 1, "reduce": reduce, "include_self": include},
        lambda x, i, s, r=reduce, inc=include: aten.scatter_reduce.two(
            x, 1, i, s, r, include_self=inc)), dtypes=["f32", "i64", "f32"], ints={1: 4})
CASES["index_add_alpha"] = dict(case("aten.index_add", [[5, 3], [4], [4, 3]],
                                     {"dim": 0, "alpha": 2.0},
                                     lambda x, i, s: aten.index_add(x, 0, i, s, alpha=2.0)),
                                dtypes=["f32", "i64", "f32"], ints={1: 5})
CASES["index_select_mid"] = dict(case("aten.index_select", [[2, 5, 3], [4]], {"dim": 1},
                                      lambda x, i: aten.index_select(x, 1, i)),
                                 dtypes=["f32", "i64"], ints={1: 5}, decomposed=True)
CASES["flip"] = dict(case("aten.flip", [[3, 4, 2]], {"dims": [0, 2]},
                          lambda x: aten.flip(x, [0, 2])), decomposed=True)
CASES["roll"] = dict(case("aten.roll", [[3, 5]], {"shifts": [2, -1], "dims": [1, 0]},
                          lambda x: aten.roll(x, [2, -1], [1, 0])), decomposed=True)
CASES["roll_flat"] = dict(case("aten.roll", [[2, 3]], {"shifts": [4]},
                               lambda x: aten.roll(x, [4])), decomposed=True)
CASES["repeat"] = dict(case("aten.repeat", [[2, 3]], {"repeats": [2, 1, 2]},
                            lambda x: aten.repeat(x, [2, 1, 2])), decomposed=True)
CASES["pixel_shuffle"] = dict(case("aten.pixel_shuffle", [[2, 12, 3, 4]], {"upscale_factor": 2},
                                   lambda x: aten.pixel_shuffle(x, 2)), decomposed=True)
CASES["clamp_tensor"] = dict(case("aten.clamp.Tensor", [[4, 5], [5], [4, 1]], {},
                                  aten.clamp.Tensor, segments=[1, 1, 1]), decomposed=True)
CASES["max_dim_values"] = dict(case("aten.max.dim", [[4, 6]], {"dim": 1},
                                    lambda x: aten.max.dim(x, 1)[0]), decomposed=True,
                               results=2)
# sort and topk: values (results=2: the indices are the second result);
# ties in an int64 row come out in ATen's order.
CASES["sort_desc"] = dict(case("aten.sort", [[3, 7]], {"dim": 1, "descending": True},
                               lambda x: aten.sort(x, 1, True)[0]), results=2)
CASES["sort_stable_i64"] = dict(case("aten.sort.stable", [[2, 9]], {"stable": True, "dim": -1},
                                     lambda x: aten.sort.stable(x, stable=True, dim=-1)[0]),
                                dtypes=["i64"], ints={0: 4}, results=2)
CASES["topk_mid"] = dict(case("aten.topk", [[4, 6, 3]], {"k": 2, "dim": 1},
                              lambda x: aten.topk(x, 2, 1)[0]), results=2)
# BinaryFunctions.def and rounding division: floor division as ATen computes
# it (negative quotients, a divisor's sign for remainder).
CASES["logical_and"] = dict(case("aten.logical_and", [[4, 5], [5]], {}, aten.logical_and),
                            dtypes=["i64", "f32"], ints={0: 3})
CASES["logical_xor_bool"] = dict(case("aten.logical_xor", [[6], [6]], {}, aten.logical_xor),
                                 dtypes=["i1", "i1"])
CASES["remainder"] = case("aten.remainder.Tensor", [[3, 7], [7]], {}, aten.remainder.Tensor)
CASES["fmod_scalar"] = case("aten.fmod.Scalar", [[3, 7]], {"other": -0.75},
                            lambda x: aten.fmod.Scalar(x, -0.75))
CASES["atan2_int"] = dict(case("aten.atan2", [[5, 2], [2]], {}, aten.atan2),
                          dtypes=["i64", "i64"], ints={0: 9, 1: 9})
CASES["div_floor"] = case("aten.div.Tensor_mode", [[4, 6], [6]], {"rounding_mode": "floor"},
                          lambda a, b: aten.div.Tensor_mode(a, b, rounding_mode="floor"))
CASES["div_trunc_scalar"] = case("aten.div.Scalar_mode", [[4, 6]],
                                 {"other": -0.3, "rounding_mode": "trunc"},
                                 lambda a: aten.div.Scalar_mode(a, -0.3, rounding_mode="trunc"))
CASES["sin_int"] = dict(case("aten.sin", [[9]], {}, aten.sin), dtypes=["i64"], ints={0: 50})
# 8- and 16-bit integers compute in i32 (dynoc-widen-reduced-precision) and
# wrap as eager's do: inputs over the type's whole range.
CASES["add_i8_wraps"] = dict(case("aten.add.Tensor", [[4, 9], [9]], {}, aten.add.Tensor),
                             dtypes=["i8", "i8"])
CASES["mul_ui8_wraps"] = dict(case("aten.mul.Tensor", [[3, 11], [3, 11]], {},
                                   aten.mul.Tensor), dtypes=["ui8", "ui8"])
CASES["sub_i16"] = dict(case("aten.sub.Tensor", [[5, 6], [5, 6]], {}, aten.sub.Tensor),
                        dtypes=["i16", "i16"])
CASES["neg_i8"] = dict(case("aten.neg", [[17]], {}, aten.neg), dtypes=["i8"])
CASES["bitwise_not_ui8"] = dict(case("aten.bitwise_not", [[4, 5]], {}, aten.bitwise_not),
                                dtypes=["ui8"])
CASES["lt_i16"] = dict(case("aten.lt.Tensor", [[6, 2], [2]], {}, aten.lt.Tensor),
                       dtypes=["i16", "i16"])
CASES["logical_not"] = dict(case("aten.logical_not", [[4, 5]], {}, aten.logical_not),
                            dtypes=["i1"])
CASES["bitwise_not_bool"] = dict(case("aten.bitwise_not", [[4, 5]], {}, aten.bitwise_not),
                                 dtypes=["i1"])
CASES["bitwise_not_i64"] = dict(case("aten.bitwise_not", [[3, 7]], {}, aten.bitwise_not),
                                dtypes=["i64"])
CASES["where"] = dict(case("aten.where.self", [[3, 1], [3, 4], [4]], {},
                           aten.where.self), dtypes=["i1", "f32", "f32"])
CASES["where_f64_scalar"] = dict(case("aten.where.self", [[2, 3], [2, 3], []], {},
                                      aten.where.self), dtypes=["i1", "f64", "f64"])
CASES["masked_fill"] = dict(case("aten.masked_fill.Scalar", [[3, 5], [5]],
                                 {"value": -1.5},
                                 lambda x, m: aten.masked_fill.Scalar(x, m, -1.5)),
                            dtypes=["f32", "i1"])
# A bool mask in arithmetic promotes (`x * mask.unsqueeze(-1)`); bools alone
# multiply and add as logical and/or.
CASES["mul_f32_by_bool"] = dict(case("aten.mul.Tensor", [[2, 5, 3], [2, 5, 1]], {},
                                     aten.mul.Tensor), dtypes=["f32", "i1"])
CASES["add_bool_bool"] = dict(case("aten.add.Tensor", [[3, 4], [4]], {},
                                   aten.add.Tensor), dtypes=["i1", "i1"])
CASES["maximum_bool_bool"] = dict(case("aten.maximum", [[3, 4], [3, 4]], {},
                                       aten.maximum), dtypes=["i1", "i1"])
CASES["argmax_dim"] = case("aten.argmax", [[3, 7, 2]], {"dim": -2},
                           lambda x: aten.argmax(x, -2))
CASES["argmin_keepdim"] = case("aten.argmin", [[4, 6]], {"dim": 1, "keepdim": True},
                               lambda x: aten.argmin(x, 1, True))
CASES["argmax_all_i64"] = dict(case("aten.argmax", [[5, 4]], {},
                                    lambda x: aten.argmax(x)), dtypes=["i64"],
                               ints={0: 1000})
CASES["index_dim0"] = dict(case("aten.index.Tensor", [[6, 3], [4]], {},
                                lambda x, i: aten.index.Tensor(x, [i])),
                           dtypes=["f32", "i64"], ints={1: 6}, negative_index={1: 6})
CASES["index_after_none"] = dict(case("aten.index.Tensor", [[2, 5, 3], [2, 1], [4]],
                                      {"indices_none": [0]},
                                      lambda x, i, j: aten.index.Tensor(x, [None, i, j])),
                                 dtypes=["f32", "i64", "i64"], ints={1: 5, 2: 3})
CASES["index_split"] = dict(case("aten.index.Tensor", [[4, 3, 5], [2], [2]],
                                 {"indices_none": [1]},
                                 lambda x, i, j: aten.index.Tensor(x, [i, None, j])),
                            dtypes=["f64", "i64", "i64"], ints={1: 4, 2: 5})
# index_put: the static KV cache's write at positions (index_copy along a dim
# decomposes into it), gpt-fast's `k[:, :, pos] = v`, broadcast values,
# accumulation over repeated indices.
CASES["index_put_cache"] = dict(case(
    "aten.index_put", [[1, 2, 8, 4], [3], [1, 2, 3, 4]],
    {"indices_none": [0, 1], "accumulate": False},
    lambda x, i, v: aten.index_put(x, [None, None, i], v)),
    dtypes=["f32", "i64", "f32"], ints={1: 8}, distinct=[1])
CASES["index_put_rows_broadcast"] = dict(case(
    "aten.index_put", [[6, 5], [3], [5]], {"accumulate": False},
    lambda x, i, v: aten.index_put(x, [i], v)),
    dtypes=["f64", "i64", "f64"], ints={1: 6}, distinct=[1])
CASES["index_put_accumulate"] = dict(case(
    "aten.index_put", [[5, 3], [7], [7, 3]], {"accumulate": True},
    lambda x, i, v: aten.index_put(x, [i], v, True)),
    dtypes=["f32", "i64", "f32"], ints={1: 5})
CASES["index_put_i64_pairs"] = dict(case(
    "aten.index_put", [[4, 6], [3], [3], [3]], {"accumulate": True},
    lambda x, i, j, v: aten.index_put(x, [i, j], v, True)),
    dtypes=["i64", "i64", "i64", "i64"], ints={0: 50, 1: 4, 2: 6, 3: 50})
CASES["index_copy_dim2"] = dict(case(
    "aten.index_copy", [[1, 2, 8, 4], [3], [1, 2, 3, 4]], {"dim": 2},
    lambda x, i, s: aten.index_copy(x, 2, i, s)),
    dtypes=["f32", "i64", "f32"], ints={1: 8}, distinct=[1], decomposed=True)
CASES["index_copy_neg_dim"] = dict(case(
    "aten.index_copy", [[5, 4], [2], [5, 2]], {"dim": -1},
    lambda x, i, s: aten.index_copy(x, -1, i, s)),
    dtypes=["f32", "i64", "f32"], ints={1: 4}, distinct=[1], decomposed=True)
# The functional forms of in-place updates of views (capture/recorder.py),
# decomposed into index_put.
CASES["slice_scatter_last"] = dict(case(
    "aten.slice_scatter", [[3, 7], [3, 6]], {"dim": 1, "start": 1, "end": 9223372036854775807},
    lambda x, s: aten.slice_scatter(x, s, 1, 1)), decomposed=True)
CASES["slice_scatter_step"] = dict(case(
    "aten.slice_scatter", [[8, 3], [3, 3]], {"dim": 0, "start": -7, "end": 7, "step": 2},
    lambda x, s: aten.slice_scatter(x, s, 0, -7, 7, 2)), decomposed=True)
CASES["select_scatter_mid"] = dict(case(
    "aten.select_scatter", [[2, 5, 3], [2, 3]], {"dim": 1, "index": -1},
    lambda x, s: aten.select_scatter(x, s, 1, -1)), decomposed=True)
CASES["fill_scalar"] = dict(case("aten.fill.Scalar", [[3, 4]], {"value": 2.5},
                                 lambda x: aten.fill.Scalar(x, 2.5)), decomposed=True)
CASES["fill_tensor"] = dict(case("aten.fill.Tensor", [[3, 4], []], {},
                                 aten.fill.Tensor), decomposed=True)
CASES["ones"] = case("aten.ones", [], {"size": [2, 0, 3]}, lambda: aten.ones([2, 0, 3]))
CASES["zeros_like_i64"] = dict(case("aten.zeros_like", [[3, 2]], {},
                                    aten.zeros_like), dtypes=["i64"], ints={0: 9})
CASES["ones_like"] = case("aten.ones_like", [[4]], {}, aten.ones_like)
for name in ("add", "sub", "mul", "div"):
    CASES[f"{name}_f64"] = dict(case(f"aten.{name}.Tensor", [[3, 4], []], {},
                                     getattr(aten, name).Tensor), dtypes=["f64", "i64"],
                                ints={1: 5}, nonzero={1})
    CASES[f"{name}_scalar_i64"] = dict(case(f"aten.{name}.Scalar", [[7]], {"other": 3},
                                            lambda x, f=getattr(aten, name).Scalar: f(x, 3)),
                                       dtypes=["i64"], ints={0: 50})
for name in ("exp", "tanh", "sigmoid", "gelu", "neg", "relu"):
    CASES[f"{name}_f64"] = dict(case(f"aten.{name}", [[4, 9]], {}, getattr(aten, name)),
                                dtypes=["f64"])
CASES["transpose_i64"] = dict(case("aten.transpose.int", [[2, 5]], {"dim0": 0, "dim1": 1},
                                   lambda x: aten.transpose.int(x, 0, 1).contiguous()),
                              dtypes=["i64"], ints={0: 100})


# Reduced precision: each float32 case again with its float32 inputs in bf16/f16.
REDUCED = {"bf16": torch.bfloat16, "f16": torch.float16}
for name, c in list(CASES.items()):
    base = c.get("dtypes", ["f32"] * len(c["inputs"]))
    if "f32" in base:
        for rd in REDUCED:
            CASES[f"{name}_{rd}"] = dict(c, dtypes=[rd if d == "f32" else d for d in base],
                                         reduced=rd)

# ALiBi's slopes: a float base to integer powers (float32 only).
CASES["pow_tensor_tensor"] = dict(case("aten.pow.Tensor_Tensor", [[4, 1], [5]], {},
                                       aten.pow.Tensor_Tensor), dtypes=["f32", "i64"],
                                  ints={1: 4})

MLIR_DTYPE = {torch.float32: "f32", torch.float64: "f64", torch.int64: "i64",
              torch.bool: "i1", torch.bfloat16: "bf16", torch.float16: "f16",
              torch.int8: "i8", torch.uint8: "ui8", torch.int16: "i16"}
PARAMS = [(name, opt) for name in sorted(CASES)
          for opt in (["-O2"] if "reduced" in CASES[name] or CASES[name].get("decomposed")
                      else ["-O0", "-O2"])]


NARROW_INTS = {"i8": torch.int8, "ui8": torch.uint8, "i16": torch.int16}


def make_inputs(name):
    """The inputs of case `name`: they depend on the case alone, not on which
    tests ran before in this worker, so a failure reproduces."""
    c = CASES[name]
    positive = set(c.get("positive", []))
    if c["op"] in ("aten.sqrt", "aten.rsqrt"):
        positive.add(0)
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    ints = c.get("ints", {})
    dtypes = c.get("dtypes", ["f32"] * len(c["inputs"]))
    inputs = []
    for i, s in enumerate(c["inputs"]):
        if dtypes[i] == "i1":
            inputs.append(torch.from_numpy(rng.integers(0, 2, s).astype(bool)))
        elif dtypes[i] == "i64" and i in c.get("distinct", ()):
            # Distinct indices in [0, ints[i]) (index_put without accumulate:
            # which of two writes to one place wins is unspecified).
            pick = rng.permutation(ints[i])[:int(np.prod(s))]
            inputs.append(torch.from_numpy(pick.reshape(s).astype(np.int64)))
        elif dtypes[i] in NARROW_INTS:
            info = torch.iinfo(NARROW_INTS[dtypes[i]])
            values = rng.integers(info.min, info.max + 1, s)
            inputs.append(torch.from_numpy(values).to(NARROW_INTS[dtypes[i]]))
        elif dtypes[i] == "i64":
            low = 1 if i in c.get("nonzero", ()) else -c.get("negative_index", {}).get(i, 0)
            inputs.append(torch.from_numpy(rng.integers(low, ints.get(i, 10), s)))
        else:
            t = rand(rng, s, i in positive)
            inputs.append(t.double() if dtypes[i] == "f64" else
                          t.to(REDUCED[dtypes[i]]) if dtypes[i] in REDUCED else t)
    return inputs


@pytest.fixture(scope="module")
def load():
    import dynoc
    return dynoc.load


@pytest.mark.parametrize("name,opt", PARAMS)
def test_op_matches_aten(name, opt, tmp_path, load):
    c = CASES[name]
    inputs = make_inputs(name)
    ref = c["ref"](*inputs)
    graph = tmp_path / "g.mlir"
    write_graph(graph, c, list(ref.shape), MLIR_DTYPE[ref.dtype])
    so = tmp_path / "g.so"
    p = subprocess.run([DYNOC, "build", opt, graph, "-o", so], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr + graph.read_text()
    got = load(so)(*inputs)
    assert got.shape == ref.shape
    if "reduced" in c:  # torch's tolerances for the dtype: an ulp or two
        rtol = {"bf16": 1.6e-2, "f16": 2e-3}[c["reduced"]]
        # ATen's reduced-precision attention rounds its scores and weights to
        # the dtype before the second GEMM; dynoc rounds only the result.
        atol = 1e-2 if "attention" in name else 1e-3
        torch.testing.assert_close(got, ref, rtol=rtol, atol=atol)
    else:
        torch.testing.assert_close(got, ref, rtol=1e-5, atol=1e-5)
