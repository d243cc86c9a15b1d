"""Training steps on the GPU against torch eager on the GPU: each model of
bench/train (MLPs with SGD+momentum and AdamW, a cross-entropy classifier, a
CNN with batch norm in train mode and max pooling, a character GPT with
AdamW), captured on the CPU and built with `dynoc build --target=cuda` on a
machine without a GPU (`bench/train/gpu.py prepare`), run here from the
state the capture ended in: 6 steps through dynoc.load (direct, captured and
replayed CUDA graphs) and through examples/train's C++ loop (libdynrt
alone). Each step's loss and the parameters after the last are checked
against eager's (float32, TF32 off: relative 1e-4). Skips, with one line,
where no GPU is present (CI)."""
import importlib.util
import pathlib
import subprocess

import pytest
import torch

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(),
                                reason="no CUDA GPU here: the GPU tests run on the GPU "
                                       "machine through tools/test_gpu.sh")

_spec = importlib.util.spec_from_file_location("dynoc_bench_train_gpu",
                                               ROOT / "bench" / "train" / "gpu.py")
train_gpu = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(train_gpu)

torch.backends.cudnn.allow_tf32 = False
torch.backends.cuda.matmul.allow_tf32 = False
STEPS = 6
TOL = 1e-4


def artifact(name):
    d = train_gpu.ART / name
    if not (d / "step.so").exists():
        pytest.fail(f"{d}/step.so is missing: run bench/train/gpu.py prepare on the build "
                    "machine and carry build/gpu")
    return d


def eager_losses(name):
    e = train_gpu.Eager(name)
    losses = [e.step(e.x, e.y).item() for _ in range(STEPS)]
    return e, losses


def rel(a, b):
    return abs(a - b) / max(abs(b), 1e-12)


@pytest.mark.parametrize("name", list(train_gpu.cpu_bench.MODELS))
def test_step_matches_eager_from_python(name):
    import dynoc
    d = artifact(name)
    e, want = eager_losses(name)
    m = dynoc.load(d / "step.so")
    assert m.device.type == "cuda"
    got = [m(e.x, e.y).item() for _ in range(STEPS)]
    worst = max(rel(g, w) for g, w in zip(got, want))
    assert worst <= TOL, f"losses {got} vs eager's {want}"
    params = dict(e.model.named_parameters())
    checked = 0
    for wname in m.weight_names():
        key = train_gpu.model_key(wname)
        if key not in params:
            continue
        got_p = m.read_weight(wname).double().cpu()
        want_p = params[key].detach().double().cpu()
        err = ((got_p - want_p).norm() / want_p.norm().clamp_min(1e-30)).item()
        assert err <= TOL, f"{key}: relative difference {err:.3g} after {STEPS} steps"
        checked += 1
    assert checked == len(params), f"checked {checked} of {len(params)} parameters"


@pytest.mark.parametrize("name", ["mlp_regression_adamw", "cnn_batchnorm"])
def test_step_matches_eager_from_cpp(name):
    d = artifact(name)
    _, want = eager_losses(name)
    binary = train_gpu.ART.parent / "bin" / "train"
    p = subprocess.run([binary, d / "step.so", d / "x.npy", d / "y.npy", str(STEPS)],
                       capture_output=True, text=True, env=train_gpu.cuda_library_env())
    assert p.returncode == 0, p.stderr
    got = [float(l.split()[-1]) for l in p.stdout.splitlines() if " loss " in l]
    assert len(got) == STEPS, p.stdout
    worst = max(rel(g, w) for g, w in zip(got, want))
    assert worst <= TOL, f"losses {got} vs eager's {want}"
