"""CUDA models against torch eager on the GPU: the model suite at batch 1 and
32 (relative error against eager in the same dtype: float32 <= 1e-4, bfloat16
<= 2e-2) and the op cases (float32, bfloat16, float16), each built on a
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
# The references in full f32: cuDNN's convolutions default to TF32 in torch;
# dynoc's f32 builds use TF32 only with --allow-tf32.
torch.backends.cudnn.allow_tf32 = False
torch.backends.cuda.matmul.allow_tf32 = False


def rel_err(got, ref):
    got, ref = got.double(), ref.double()
    return ((got - ref).norm() / ref.norm().clamp_min(1e-30)).item()


def artifact(*parts):
    p = ART.joinpath(*parts)
    if not p.exists():
        pytest.fail(f"{p} is missing: run tools/build_gpu_artifacts.py on the build machine")
    return p


@pytest.mark.parametrize("graphs", [True, False], ids=["graphs", "direct"])
@pytest.mark.parametrize("dtype", cuda_cases.DTYPES)
@pytest.mark.parametrize("batch", cuda_cases.BATCHES)
@pytest.mark.parametrize("name", cuda_cases.MODELS)
def test_model_matches_eager(name, batch, dtype, graphs, capfd):
    import dynoc
    import models
    d = artifact("models", cuda_cases.model_dir(name, batch, dtype))
    dt = cuda_cases.torch_dtype(dtype)
    m, _ = models.make(name, batch)
    m = m.to(dt)
    m.load_state_dict(torch.load(cuda_cases.eager_weights(name, dtype)))
    m = m.cuda().eval()
    built = dynoc.load(d / "model.so", cuda_graphs=graphs)
    assert built.device.type == "cuda"
    # Fresh inputs each call (CUDA graphs replay on copies of them), three
    # calls: direct, captured, replayed.
    for step in range(3):
        torch.manual_seed(100 + step)
        x = models.example_input(name, batch).cuda()
        if x.is_floating_point():
            x = x.to(dt)
        with torch.no_grad():
            ref = models.main_output(m(x))
        got = models.main_output(built(x))
        assert got.device.type == "cuda" and got.shape == ref.shape
        assert got.dtype == ref.dtype
        assert torch.isfinite(got).all()
        err = rel_err(got, ref)
        tol = cuda_cases.MODEL_TOLERANCE[dtype]
        assert err <= tol, f"{name} b{batch} {dtype} call {step}: relative error {err:.2e}"
    # The runtime says when a capture failed and it fell back to direct runs.
    assert "CUDA graphs off" not in capfd.readouterr().err


@pytest.mark.parametrize("name", cuda_cases.op_cases())
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
    if "reduced" in c:  # as test_cpu_ops: an ulp or two of the dtype
        rtol = {"bf16": 1.6e-2, "f16": 2e-3}[c["reduced"]]
        # Attention and cuDNN's bf16/f16 convolutions sum many products
        # whose partial sums may round in the reduced dtype (eager's and
        # dynoc's pick different algorithms): an ulp at the output's scale.
        atol = 1e-2 if "attention" in name or name.startswith("conv") else 1e-3
        torch.testing.assert_close(got, ref, rtol=rtol, atol=atol)
    else:
        torch.testing.assert_close(got, ref, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name", ["cnn", "encoder_block"])
def test_profile_times_each_kernel_on_the_device(name, tmp_path):
    """dynoc.profile on a CUDA model: every kernel of the manifest has a span
    inside each run's, timed on the device (the runtime waits for each), and
    the results are those of a run without the profile."""
    import json
    import dynoc
    import models
    d = artifact("models", cuda_cases.model_dir(name, 1, "f32"))
    built = dynoc.load(d / "model.so")
    kernels = built.manifest["graphs"][0]["kernels"]
    torch.manual_seed(7)
    x = models.example_input(name, 1).cuda()
    plain = [built(x) for _ in range(3)]  # direct, captured, replayed
    with dynoc.profile(tmp_path / "trace.json"):
        profiled = [built(x) for _ in range(2)]
    for a in plain + profiled[1:]:
        torch.testing.assert_close(profiled[0], a, rtol=0, atol=0)
    trace = json.loads((tmp_path / "trace.json").read_text())
    spans = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    runs = [s for s in spans if s["name"].startswith("run ")]
    assert len(runs) == 2
    for r in runs:
        inside = [s for s in spans if s["cat"] != "runtime" and s["tid"] == r["tid"]
                  and r["ts"] <= s["ts"] and s["ts"] + s["dur"] <= r["ts"] + r["dur"] + 0.01]
        assert [s["name"] for s in inside] == [k["name"] for k in kernels]
        busy = sum(s["dur"] for s in inside)
        # Device time, not launch time: the kernels fill most of the run.
        assert 0.3 * r["dur"] <= busy <= r["dur"] + 0.01, (busy, r["dur"])
