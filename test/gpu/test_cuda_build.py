"""The CUDA target on a machine without a GPU (CI): `dynoc build --target=cuda`
compiles a captured model and op graphs through nvcc into a .so whose manifest
names the device, and refuses what it cannot build with a located message.
Running them is test_cuda_run.py's (on the GPU machine)."""
import glob
import json
import os
import subprocess
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
from conftest import DYNOC  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))


def dynoc(*args):
    return subprocess.run([DYNOC, *map(str, args)], capture_output=True, text=True)


@pytest.fixture(scope="module")
def encoder_graph(tmp_path_factory):
    """The suite's transformer encoder block, captured at batch 2."""
    d = tmp_path_factory.mktemp("encoder")
    script = d / "capture.py"
    script.write_text(
        "import sys\n"
        f"sys.path.insert(0, {os.path.join(ROOT, 'bench', 'cpu')!r})\n"
        "import torch, models\n"
        "m, x = models.make('encoder_block', 2)\n"
        "with torch.no_grad():\n"
        "    torch.compile(m)(x)\n")
    p = dynoc("capture", script, "-o", d / "out")
    assert p.returncode == 0, p.stderr
    return d / "out" / "graph_0.mlir"


def test_model_builds_for_cuda(encoder_graph, tmp_path):
    so = tmp_path / "encoder.so"
    p = dynoc("build", "--target=cuda", encoder_graph, "-o", so)
    assert p.returncode == 0, p.stderr
    assert "nvcc" in p.stderr and "-gencode=arch=compute_90,code=sm_90" in p.stderr
    manifest = json.loads(dynoc("inspect", so).stdout)
    assert manifest["device"] == "cuda"
    assert manifest["graphs"][0]["workspace_bytes"] > 8 << 20  # intermediates + cuBLASLt's
    assert (tmp_path / "encoder.weights.safetensors").exists()
    # The .so carries SASS for sm_90 and PTX (cuobjdump, where the toolkit has it).
    cuobjdump = "/usr/local/cuda/bin/cuobjdump"
    if os.path.exists(cuobjdump):
        listing = subprocess.run([cuobjdump, "--list-elf", "--list-ptx", so],
                                 capture_output=True, text=True).stdout
        assert "sm_90" in listing and ".ptx" in listing


def test_cuda_source_is_a_located_unit(encoder_graph, tmp_path):
    out = tmp_path / "model.cu"
    p = dynoc("build", "--target=cuda", "--emit=cu", encoder_graph, "-o", out)
    assert p.returncode == 0, p.stderr
    src = out.read_text()
    assert "dynoc_k::gemm_bias(" in src and "dynoc_k::layer_norm(" in src
    assert "dynoc_k::softmax(" in src and "void *workspace, void *stream)" in src
    # Elementwise loops are kernels at file scope, launched by name; the
    # encoder's two residual additions have the same body and share one.
    # Static shapes under 2^31 elements: a 32-bit index (DYNOC_LAUNCH32).
    assert "__global__ void dynoc_pointwise_0(" in src and "DYNOC_LAUNCH32(dynoc_pointwise_0, " in src
    kernels = src.count("__global__ void dynoc_pointwise_")
    assert sum(src.count(f"DYNOC_LAUNCH32(dynoc_pointwise_{k}, ") for k in range(kernels)) > kernels


def test_kernel_library_is_compiled_once_and_linked(encoder_graph, tmp_path):
    """The library's GEMM/attention/data-movement objects come from the
    cache: a second build compiles only the model's own source."""
    dynoc("build", "--target=cuda", encoder_graph, "-o", tmp_path / "first.so")
    p = dynoc("build", "--target=cuda", encoder_graph, "-o", tmp_path / "second.so")
    assert p.returncode == 0, p.stderr
    assert "compiling the CUDA kernel library" not in p.stderr
    assert "libdynoc_cuda.a" in p.stderr and "--no-undefined" in p.stderr


def test_kernel_library_failure_is_one_message(encoder_graph, tmp_path):
    """nvcc failing on the library (here: an nvcc that always fails, with an
    empty cache) is an error naming the unit, and no .so is written."""
    # The empty cache also hides bootstrap's cuBLAS: named explicitly.
    cublas = glob.glob(os.path.expanduser("~/.cache/dynoc/nvidia-cublas-*/nvidia/cu13"))
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "cache"), NVCC="/bin/false",
               DYNOC_CUBLAS_HOME=cublas[0])
    p = subprocess.run([DYNOC, "build", "--target=cuda", encoder_graph, "-o", tmp_path / "m.so"],
                       capture_output=True, text=True, env=env)
    assert p.returncode == 1
    assert "the CUDA compiler (nvcc) failed on the kernel library's core.o (exit 1)" in p.stderr
    assert not (tmp_path / "m.so").exists()


def test_bad_arch_and_flags_are_refused(encoder_graph, tmp_path):
    p = dynoc("build", "--target=cuda", "--arch=hopper", encoder_graph, "-o", tmp_path / "m.so")
    assert p.returncode == 1
    assert "--arch 'hopper' is not of the form sm_90" in p.stderr
    assert not (tmp_path / "m.so").exists()
    p = dynoc("build", "--allow-tf32", encoder_graph, "-o", tmp_path / "m.so")
    assert p.returncode == 1 and "--arch and --allow-tf32 need --target=cuda" in p.stderr
    p = dynoc("build", "--emit=cpp", "--target=cuda", encoder_graph, "-o", tmp_path / "m.cpp")
    assert p.returncode == 1 and "--emit=cu" in p.stderr


def test_cnn_builds_with_cudnn_and_only_it_links_cudnn(tmp_path, encoder_graph):
    """Convolutions go to cuDNN: a CNN's .so links libcudnn.so.9 (and
    cuBLASLt for its linear layer); a transformer's links no cuDNN, so it
    loads where cuDNN is not installed."""
    script = tmp_path / "cnn.py"
    script.write_text(
        "import sys\n"
        f"sys.path.insert(0, {os.path.join(ROOT, 'bench', 'cpu')!r})\n"
        "import torch, models\n"
        "m, x = models.make('cnn', 1)\n"
        "with torch.no_grad():\n"
        "    torch.compile(m)(x)\n")
    assert dynoc("capture", script, "-o", tmp_path / "out").returncode == 0
    p = dynoc("build", "--target=cuda", tmp_path / "out" / "graph_0.mlir", "-o", tmp_path / "cnn.so")
    assert p.returncode == 0, p.stderr

    def needed(so):
        out = subprocess.run(["readelf", "-d", so], capture_output=True, text=True).stdout
        return [line.split("[")[1].rstrip("]") for line in out.splitlines() if "(NEEDED)" in line]
    assert "libcudnn.so.9" in needed(tmp_path / "cnn.so")
    assert "libcublasLt.so.13" in needed(tmp_path / "cnn.so")
    p = dynoc("build", "--target=cuda", encoder_graph, "-o", tmp_path / "enc.so")
    assert p.returncode == 0, p.stderr
    assert not any("cudnn" in n for n in needed(tmp_path / "enc.so"))


def test_training_step_builds_for_cuda(tmp_path):
    """A captured training step (a convolution, batch norm in train mode, max
    pooling, cross-entropy, SGD with momentum) builds for the GPU: its
    backward kernels (the convolution's gradients through cuDNN, max
    pooling's through the indices its forward writes) and the optimizer
    update, whose parameters and momenta the manifest lists as weights the
    step changes in place. Running it is test_cuda_train.py's."""
    script = tmp_path / "train.py"
    script.write_text(
        "import torch\n"
        "from torch import nn\n"
        "torch.manual_seed(0)\n"
        "model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),\n"
        "                      nn.MaxPool2d(2), nn.Flatten(), nn.Linear(8 * 4 * 4, 10))\n"
        "opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)\n"
        "x, y = torch.randn(4, 3, 8, 8), torch.randint(0, 10, (4,))\n"
        "@torch.compile\n"
        "def step(x, y):\n"
        "    opt.zero_grad()\n"
        "    loss = nn.functional.cross_entropy(model(x), y)\n"
        "    loss.backward()\n"
        "    opt.step()\n"
        "    return loss\n"
        "for _ in range(3):\n"
        "    step(x, y)\n")
    p = dynoc("capture", script, "-o", tmp_path / "out")
    assert p.returncode == 0, p.stderr
    p = dynoc("build", "--target=cuda", tmp_path / "out" / "step_1.mlir", "-o",
              tmp_path / "step.so")
    assert p.returncode == 0, p.stderr
    manifest = json.loads(dynoc("inspect", tmp_path / "step.so").stdout)
    assert manifest["device"] == "cuda"
    assert "libcudnn" in manifest["build"]["libraries"]
    graph = manifest["graphs"][0]
    mutated = {m["input"] for m in graph["mutations"]}
    assert any("momentum_buffer" in n for n in mutated), mutated
    assert any(n.endswith(".weight") for n in mutated), mutated
