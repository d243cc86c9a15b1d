"""Which of PyTorch's OpInfos the op-coverage suite runs, and how one sample
of one becomes a call that dynoc compiles.

The OpInfo database (`torch.testing._internal.common_methods_invocations.op_db`)
ships with the torch wheel: for every op, the dtypes eager supports on each
device and generators of sample inputs. The suite takes:

- every OpInfo whose ATen op is in PyTorch's Core ATen opset (an overload of it
  carries `torch.Tag.core`, read from the installed torch, not a list kept here);
- the `nn.functional` OpInfos (and a few torch composites) that user programs
  call, whose core ops (convolution, _softmax, native_layer_norm, ...) OpInfo
  reaches only through them.
"""
import torch
from torch.utils._pytree import tree_flatten, tree_unflatten

# Composites users call; each reaches Core ATen ops that have no OpInfo of
# their own (torch.Tag.core names `convolution`, `_softmax`, `embedding`, ...).
USER_FUNCTIONAL = (
    "nn.functional.linear", "nn.functional.bilinear", "nn.functional.conv1d",
    "nn.functional.conv2d", "nn.functional.conv3d", "nn.functional.conv_transpose1d",
    "nn.functional.conv_transpose2d", "nn.functional.layer_norm",
    "nn.functional.group_norm", "nn.functional.batch_norm", "nn.functional.instance_norm",
    "nn.functional.rms_norm", "nn.functional.local_response_norm", "softmax", "log_softmax",
    "nn.functional.softmin", "nn.functional.scaled_dot_product_attention",
    "nn.functional.embedding", "nn.functional.embedding_bag", "nn.functional.one_hot",
    "nn.functional.cross_entropy", "nn.functional.nll_loss", "nn.functional.mse_loss",
    "nn.functional.l1_loss", "nn.functional.smooth_l1_loss", "nn.functional.huber_loss",
    "nn.functional.kl_div", "nn.functional.binary_cross_entropy",
    "nn.functional.binary_cross_entropy_with_logits", "nn.functional.cosine_similarity",
    "nn.functional.pairwise_distance", "nn.functional.normalize",
    "nn.functional.interpolate", "nn.functional.pad", "nn.functional.pixel_shuffle",
    "nn.functional.unfold", "nn.functional.avg_pool1d", "nn.functional.avg_pool2d",
    "nn.functional.max_pool1d", "nn.functional.max_pool2d",
    "nn.functional.adaptive_avg_pool1d", "nn.functional.adaptive_avg_pool2d",
    "nn.functional.adaptive_max_pool2d", "nn.functional.relu", "nn.functional.relu6",
    "nn.functional.gelu", "nn.functional.silu", "nn.functional.mish",
    "nn.functional.elu", "nn.functional.selu", "nn.functional.celu",
    "nn.functional.leaky_relu", "nn.functional.hardtanh", "nn.functional.hardswish",
    "nn.functional.hardsigmoid", "nn.functional.softplus", "nn.functional.logsigmoid",
    "nn.functional.glu", "nn.functional.prelu", "nn.functional.threshold",
    "nn.functional.dropout", "matmul", "einsum", "baddbmm", "addmm", "linalg.vector_norm",
    "cumsum", "triu", "tril", "flip", "roll", "repeat", "expand", "chunk", "split",
    "masked_fill", "index_put", "index_copy", "index_add", "scatter", "scatter_add",
    "gather", "take_along_dim", "topk", "sort", "argsort", "where", "clamp",
)

# Dtypes a sample is run in, where eager supports them on the device.
DTYPES = (torch.float32, torch.float64, torch.bfloat16, torch.float16, torch.int64,
          torch.int32, torch.int16, torch.int8, torch.uint8, torch.bool)

DTYPE_NAMES = {torch.float32: "f32", torch.float64: "f64", torch.bfloat16: "bf16",
               torch.float16: "f16", torch.int64: "i64", torch.int32: "i32",
               torch.int16: "i16", torch.int8: "i8", torch.uint8: "u8", torch.bool: "bool"}
BY_NAME = {v: k for k, v in DTYPE_NAMES.items()}

# Ops whose samples are random draws: a compiled result cannot equal eager's
# number for number (dynoc's generator is its own); they need tests of their
# statistics, which this suite does not have yet.
RANDOM_WORDS = ("dropout", "bernoulli", "normal", "rand", "multinomial", "rrelu",
                "uniform", "exponential", "geometric", "cauchy", "log_normal", "poisson")


# Ops whose result values are undefined (uninitialized memory): only the
# result's shape and dtype are compared.
UNDEFINED_VALUES = ("empty", "empty_like", "empty_strided", "empty_permuted",
                    "new_empty", "new_empty_strided")


def core_aten_names():
    """The ATen op names with an overload tagged core in the installed torch."""
    names = set()
    for name in dir(torch.ops.aten):
        try:
            packet = getattr(torch.ops.aten, name)
            overloads = packet.overloads()
        except Exception:  # not an op packet
            continue
        if any(torch.Tag.core in getattr(packet, o).tags for o in overloads):
            names.add(name)
    return names


def key(info):
    """The suite's name for an OpInfo: its name, and its variant if any."""
    return f"{info.name}.{info.variant_test_name}" if info.variant_test_name else info.name


def selected():
    """{key: (OpInfo, "core" | "functional")} of the OpInfos the suite runs."""
    from torch.testing._internal.common_methods_invocations import op_db
    core = core_aten_names()
    chosen = {}
    for info in op_db:
        aten = info.aten_name or info.name
        if aten in core or info.name in core:
            chosen[key(info)] = (info, "core")
        elif info.name in USER_FUNCTIONAL:
            chosen[key(info)] = (info, "functional")
    return chosen


def is_random(info):
    return any(w in info.name for w in RANDOM_WORDS)


def dtypes(info, device="cpu"):
    """The suite's dtypes eager supports for `info` on `device`, in DTYPES order."""
    supported = info.supported_dtypes(device)
    return [d for d in DTYPES if d in supported]


def call(info, sample):
    """(fn, tensors): fn(*tensors) calls the op on the sample, its tensors
    (also those inside lists) as arguments and everything else constant."""
    leaves, spec = tree_flatten((sample.input, sample.args, sample.kwargs))
    slots = [i for i, v in enumerate(leaves) if isinstance(v, torch.Tensor)]
    tensors = [leaves[i] for i in slots]
    constants = [None if isinstance(v, torch.Tensor) else v for v in leaves]
    op = info.op

    def fn(*ts):
        values = list(constants)
        for i, t in zip(slots, ts):
            values[i] = t
        first, args, kwargs = tree_unflatten(values, spec)
        return op(first, *args, **kwargs)

    return fn, tensors
