"""What the GPU tests run: the model suite (bench/cpu/models.py) at batch 1 and
32, and the randomized op cases of test/e2e/test_cpu_ops.py whose op the CUDA
target compiles, in float32. Shared by the artifact build (tools/build_gpu_artifacts.py,
on a machine without a GPU) and the run (test_cuda_run.py, on the GPU)."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "bench", "cpu"))
sys.path.insert(0, os.path.join(ROOT, "test", "e2e"))

MODELS = ["mlp", "encoder_block", "bert", "gpt2"]
BATCHES = [1, 32]

# Op cases by name (test_cpu_ops.CASES): every op family the CUDA kernel
# library has, with broadcasting, zero-size and negative-dim cases.
OP_CASES = [
    "relu[3, 17]", "sigmoid[2, 0, 5]", "tanh[]", "exp[3, 17]", "silu[3, 17]",
    "sqrt", "rsqrt", "gelu", "gelu_tanh", "add_alpha", "mm", "mm_zero", "addmm",
    "linear", "bmm", "transpose_neg", "permute", "softmax_last", "softmax_mid",
    "log_softmax", "layer_norm", "expand", "embedding", "gather", "cat", "slice",
    "select", "pow3", "sum_all", "sum_last", "sum_mid_keepdim", "sum_zero",
    "mean_dim", "amax", "amin_keepdim", "stack_mid", "full", "view", "arange",
    "where", "masked_fill", "log",
]

ARTIFACTS = os.path.join(ROOT, "build", "gpu")
