"""What the GPU tests run: the model suite (bench/cpu/models.py) at batch 1 and
32 in float32 and bfloat16, and the randomized op cases of
test/e2e/test_cpu_ops.py whose op the CUDA target compiles, in float32,
bfloat16 and float16. Shared by the artifact build (tools/build_gpu_artifacts.py,
on a machine without a GPU), the run (test_cuda_run.py, on the GPU) and the
benchmark (bench/cuda/run.py)."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "bench", "cpu"))
sys.path.insert(0, os.path.join(ROOT, "test", "e2e"))

MODELS = ["mlp", "cnn", "resnext_block", "mobilenet_block", "encoder_block", "bert", "gpt2"]
BATCHES = [1, 32]
DTYPES = ["f32", "bf16"]
# Relative error (norm of the difference over the norm of eager's output) the
# model suite must stay within, against eager in the same dtype on the GPU.
MODEL_TOLERANCE = {"f32": 1e-4, "bf16": 2e-2}

# Op cases by name (test_cpu_ops.CASES): every op family the CUDA kernel
# library has, with broadcasting, zero-size and negative-dim cases.
OP_CASES = [
    "relu[3, 17]", "sigmoid[2, 0, 5]", "tanh[]", "exp[3, 17]", "silu[3, 17]",
    "sqrt", "rsqrt", "erf", "gelu", "gelu_tanh", "add_alpha", "mm", "mm_zero", "addmm",
    "linear", "bmm", "transpose_neg", "permute", "softmax_last", "softmax_mid",
    "log_softmax", "layer_norm", "expand", "embedding", "gather", "cat", "slice",
    "select", "pow3", "sum_all", "sum_last", "sum_mid_keepdim", "sum_zero",
    "mean_dim", "amax", "amin_keepdim", "stack_mid", "full", "view", "arange",
    "where", "masked_fill", "log", "conv_stride_pad_dil", "conv_groups",
    "conv_groups_resnext", "conv_groups_wide",
    "conv_pointwise", "conv_depthwise", "conv_depthwise_5x5", "conv_depthwise_mult",
    "conv_depthwise_7x7", "max_pool",
    "max_pool_2x2", "batch_norm", "constant_pad", "slice_last_dim",
    "slice_last_dim_step", "constant_pad_last_dims", "permute_tiled",
    "transpose_tiled", "expand_last_dim", "log_softmax_rows",
    "embedding_dense_backward", "attention_causalFalse", "attention_causalTrue",
    "attention_gqa16_4_causalTrue", "attention_gqa8_1_causalFalse",
    "attention_gqa32_4_causalTrue", "attention_gqa_mask", "tril_0", "tril_-2", "triu_1",
    "cumsum_mid", "cumsum_i64", "cumsum_bool", "index_dim0", "index_after_none",
    "index_split", "index_put_cache", "index_put_rows_broadcast", "index_put_accumulate",
    "index_put_i64_pairs", "index_copy_dim2", "index_copy_neg_dim",
    # the function tables (UnaryFunctions.def)
    "sin", "cos", "tan", "atan", "sinh", "asinh", "expm1", "exp2", "log2", "log10", "log1p",
    "sin_int", "floor", "round", "sign", "mish", "hardsigmoid", "elu", "softplus",
    "threshold", "round_decimals", "isnan_log",
    # BinaryFunctions.def and rounding division
    "logical_and", "logical_xor_bool", "remainder", "fmod_scalar", "atan2_int", "div_floor",
    "div_trunc_scalar",
]

ARTIFACTS = os.path.join(ROOT, "build", "gpu")


def model_dir(name, batch, dtype):
    """The artifact folder of a model variant, under ARTIFACTS/models."""
    return f"{name}_b{batch}" + ("" if dtype == "f32" else f"_{dtype}")


def eager_weights(name, dtype):
    """The eager model's weights (its state_dict), which the GPU tests and the
    benchmark load: the same seeded model at both batch sizes, kept once, in
    the batch-1 folder (the carry to the GPU machine is limited to 64 MiB)."""
    return os.path.join(ARTIFACTS, "models", model_dir(name, 1, dtype), "eager.pt")


def folder_input(folder, tool):
    """The suite's example input, on the GPU, for a model folder of
    ARTIFACTS/models (`name_bB[_bf16]`); exits naming `tool` for any other
    folder."""
    import re
    import models
    m = re.fullmatch(r"(\w+?)_b(\d+)(?:_(bf16))?", os.path.basename(os.path.normpath(folder)))
    if not m:
        sys.exit(f"{tool}: {folder} is not a model folder of build/gpu/models")
    name, batch, dtype = m.group(1), int(m.group(2)), m.group(3) or "f32"
    x = models.example_input(name, batch).cuda()
    return x.to(torch_dtype(dtype)) if x.is_floating_point() else x


def torch_dtype(dtype):
    import torch
    return {"f32": torch.float32, "bf16": torch.bfloat16}[dtype]


def op_cases():
    """OP_CASES and their bf16/f16 variants (test_cpu_ops.CASES has those for
    each case with float32 inputs)."""
    import test_cpu_ops
    return OP_CASES + [f"{n}_{rd}" for n in OP_CASES for rd in ("bf16", "f16")
                       if f"{n}_{rd}" in test_cpu_ops.CASES and f"{n}_{rd}" not in CUDA_REFUSES
                       and f"{n}_{rd}" not in REDUCED_DIFFERS]


# Reduced-precision variants whose eager CUDA kernel computes in the reduced
# type where dynoc computes in f32 and rounds once: round(x, 2) in f16 scales
# x by 100 in f16 on the GPU, so a value near a tie rounds the other way (an
# ulp of 0.01 from dynoc's; the f32 case runs). docs/cuda.md lists them.
REDUCED_DIFFERS = {"round_decimals_f16", "round_decimals_bf16"}


# Cases the CUDA target refuses at build time, by design: index_put's
# accumulation adds atomically, which the library does in f32, f64, i32 and
# i64 only (CudaTarget.cpp's dtypes()).
CUDA_REFUSES = {"index_put_accumulate_bf16", "index_put_accumulate_f16"}
