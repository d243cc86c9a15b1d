"""CUDA models against torch eager on the GPU: the model suite at batch 1 and
32 (float32: max relative error <= 1e-4) and the op cases, each built on a
machine without a GPU (tools/build_gpu_artifacts.py) and run here through
dynoc.load, with and without CUDA graphs. Skips, with one line, where no GPU
is present (CI)."""
import os
import pathlib
import sys

import pytest
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cuda_cases  # noqa: E402

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(),
                                reason="no CUDA GPU here: the GPU tests run on the GPU "
                                       "machine through tools/test_gpu.sh")

ART = pathlib.Path(cuda_cases.ARTIFACTS)


def rel_err(got, ref):
    got, ref = got.double(), ref.double()
    return ((got - ref).norm() / ref.norm().clamp_min(1e-30)).item()


def artifact(*parts):
    p = ART.joinpath(*parts)
    if not p.exists():
        pytest.fail(f"{p} is missing: run tools/build_gpu_artifacts.py on the build machine")
    return p


@pytest.mark.parametrize("graphs", [True, False], ids=["graphs", "direct"])
@pytest.mark.parametrize("batch", cuda_cases.BATCHES)
@pytest.mark.parametrize("name", cuda_cases.MODELS)
def test_model_matches_eager(name, batch, graphs, capfd):
    import dynoc
    import models
    d = artifact("models", f"{name}_b{batch}")
    m, _ = models.make(name, batch)
    m.load_state_dict(torch.load(d / "eager.pt"))
    m = m.cuda().eval()
    built = dynoc.load(d / "model.so", cuda_graphs=graphs)
    assert built.device.type == "cuda"
    # Fresh inputs each call (CUDA graphs replay on copies of them), three
    # calls: direct, captured, replayed.
    for step in range(3):
        torch.manual_seed(100 + step)
        x = models.example_input(name, batch).cuda()
        with torch.no_grad():
            ref = models.main_output(m(x))
        got = models.main_output(built(x))
        assert got.device.type == "cuda" and got.shape == ref.shape
        assert torch.isfinite(got).all()
        err = rel_err(got, ref)
        assert err <= 1e-4, f"{name} b{batch} call {step}: relative error {err:.2e}"
    # The runtime says when a capture failed and it fell back to direct runs.
    assert "CUDA graphs off" not in capfd.readouterr().err


@pytest.mark.parametrize("name", cuda_cases.OP_CASES)
def test_op_matches_aten_on_gpu(name):
    import dynoc
    import test_cpu_ops as t
    c = t.CASES[name]
    safe = "".join(ch if ch.isalnum() else "_" for ch in name)
    built = dynoc.load(artifact("ops", f"{safe}.so"))
    inputs = [x.cuda() for x in t.make_inputs(name)]
    ref = c["ref"](*inputs).cuda()  # a case without inputs makes it on the CPU
    got = built(*inputs)
    assert got.device.type == "cuda" and got.shape == ref.shape
    torch.testing.assert_close(got, ref, rtol=1e-4, atol=1e-5)
