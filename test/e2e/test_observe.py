"""Inside a running model: the profile (DYNOC_PROFILE, dynoc.profile, dynoc
bench --profile), the runtime's log, and dynoc bench."""
import json
import os
import subprocess
import sys

import pytest
import torch

from conftest import ROOT, run


NET = """\
import torch
import torch.nn as nn

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.fc = nn.Linear(8, 4)

    def forward(self, x):
        y = torch.relu(self.bn(self.conv(x)))
        y = torch.nn.functional.adaptive_avg_pool2d(y, 1).flatten(1)
        return torch.softmax(self.fc(y), dim=-1)

torch.manual_seed(0)
model = Net().eval()
with torch.no_grad():
    print(torch.compile(model)(torch.randn(2, 3, 16, 16)).shape)
"""

RUN_UNDER_PROFILE = """\
import sys, torch, dynoc
model = dynoc.load(sys.argv[1])
for _ in range(3):
    model(torch.randn(2, 3, 16, 16))
"""


@pytest.fixture(scope="module")
def net(tmp_path_factory):
    """A captured CNN: a convolution with its epilogue, a reduction, a GEMM
    and a softmax."""
    d = tmp_path_factory.mktemp("net")
    (d / "net.py").write_text(NET)
    dynoc = os.path.join(ROOT, "bazel-bin", "tools", "dynoc", "dynoc")
    run(dynoc, "capture", d / "net.py", "-o", d / "out", check=True, cwd=d)
    run(dynoc, "build", d / "out" / "graph_0.mlir", "-o", d / "net.so", check=True)
    return d / "net.so"


def check_chrome_trace(trace):
    """What Perfetto's JSON importer (and chrome://tracing) needs: an object
    with a traceEvents array; each event a name, a phase, a pid and a tid;
    complete events ("X") a start and a duration in microseconds."""
    assert isinstance(trace, dict) and isinstance(trace["traceEvents"], list)
    for e in trace["traceEvents"]:
        assert isinstance(e["name"], str) and e["ph"] in ("X", "M"), e
        assert isinstance(e["pid"], int) and isinstance(e["tid"], int), e
        if e["ph"] == "X":
            assert isinstance(e["ts"], (int, float)) and e["ts"] >= 0, e
            assert isinstance(e["dur"], (int, float)) and e["dur"] >= 0, e
            assert isinstance(e.get("cat", ""), str)
            assert isinstance(e.get("args", {}), dict)
    return [e for e in trace["traceEvents"] if e["ph"] == "X"]


def kernels_of(model_path):
    manifest = json.loads(run(os.path.join(ROOT, "bazel-bin", "tools", "dynoc", "dynoc"),
                              "inspect", model_path, check=True).stdout)
    return manifest["graphs"][0]["kernels"]


def test_dynoc_profile_traces_every_kernel_of_each_run(net, tmp_path):
    """DYNOC_PROFILE=trace.json: written at exit, one span per kernel of the
    manifest inside each run's span, named and argued from the manifest."""
    script = tmp_path / "serve.py"
    script.write_text(RUN_UNDER_PROFILE)
    env = dict(os.environ, DYNOC_PROFILE=str(tmp_path / "trace.json"))
    p = subprocess.run([sys.executable, script, net], env=env, capture_output=True,
                       text=True)
    assert p.returncode == 0, p.stderr
    spans = check_chrome_trace(json.loads((tmp_path / "trace.json").read_text()))
    kernels = kernels_of(net)
    names = [k["name"] for k in kernels]
    assert names == ["fused_convolution_relu", "mean", "addmm", "_softmax"]
    runs = [s for s in spans if s["name"] == "run graph_0"]
    assert len(runs) == 3
    assert all(s["args"]["input_shapes"] == [[2, 3, 16, 16]] for s in runs)
    for r in runs:
        inside = [s for s in spans if s["cat"] != "runtime" and s["tid"] == r["tid"]
                  and r["ts"] <= s["ts"] and s["ts"] + s["dur"] <= r["ts"] + r["dur"] + 0.01]
        assert [s["name"] for s in inside] == names
        for s, k in zip(inside, kernels):
            assert s["args"]["ops"] == k["ops"] and s["args"]["loc"] == k["loc"]
            assert s["cat"] == k["category"]
    conv = next(k for k in kernels if k["name"] == "fused_convolution_relu")
    assert conv["ops"] == ["aten.convolution", "aten.relu"]
    assert conv["category"] == "convolution"
    assert conv["loc"].endswith("graph_0.mlir:5:10")


def test_profile_context_manager_and_the_runtime_log(net, tmp_path):
    import dynoc
    messages = []
    dynoc.set_runtime_log(lambda level, m: messages.append((level, m)), "debug")
    try:
        model = dynoc.load(net)
        with dynoc.profile(tmp_path / "p.json"):
            model(torch.randn(2, 3, 16, 16))
        model(torch.randn(2, 3, 16, 16))  # after the block: not recorded
    finally:
        dynoc.set_runtime_log(None)
    spans = check_chrome_trace(json.loads((tmp_path / "p.json").read_text()))
    assert [s["name"] for s in spans if s["name"].startswith("run ")] == ["run graph_0"]
    assert ("info", f"loaded model '{net}': cpu, 1 graph(s), weights 'net.weights.safetensors'") \
        in messages
    assert ("info", f"recording a profile to '{tmp_path / 'p.json'}'") in messages
    assert any(m.startswith(f"wrote the profile '{tmp_path / 'p.json'}'") for _, m in messages)
    with pytest.raises(ValueError, match="level must be one of debug, info, warning, error"):
        dynoc.set_runtime_log(print, "loud")
    with pytest.raises(dynoc.Error, match="its directory does not exist"):
        with dynoc.profile(tmp_path / "no" / "such" / "dir.json"):
            pass


def test_dynrt_log_env_sends_messages_to_stderr(dynoc, dyn_mlp, tmp_path):
    import numpy as np
    np.save(tmp_path / "x.npy", np.ones((2, 16), np.float32))
    np.save(tmp_path / "y.npy", np.ones((2, 8), np.float32))
    env = dict(os.environ, DYNRT_LOG="info")
    p = subprocess.run([os.path.join(ROOT, "bazel-bin", "tools", "dynoc", "dynoc"), "run",
                        dyn_mlp, "-i", tmp_path / "x.npy", "-i", tmp_path / "y.npy",
                        "-o", tmp_path / "o"], env=env, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert f"dynrt info: loaded model '{dyn_mlp}': cpu, 1 graph(s)" in p.stderr


def test_bench_reports_latency_throughput_and_memory(dynoc, dyn_mlp, tmp_path):
    p = dynoc("bench", dyn_mlp, "--shape", "x=8x16", "--shape", "1=8x8", "-n", "50",
              "--warmup", "5", "--json", tmp_path / "b.json", "--profile", tmp_path / "t.json")
    assert p.returncode == 0, p.stderr
    assert "inputs      x float32[8,16], y float32[8,8]" in p.stdout
    assert "runs        50 in " in p.stdout
    b = json.loads((tmp_path / "b.json").read_text())
    lat = b["latency_ms"]
    assert b["runs"] == 50 and b["threads"] == 1 and b["batch"] == 8
    assert 0 < lat["min"] <= lat["p50"] <= lat["p90"] <= lat["p99"] <= lat["max"]
    assert b["samples_per_second"] == pytest.approx(8 * b["runs_per_second"])
    assert b["peak_rss_bytes"] > 0 and b["weight_bytes"] == (8 * 16 + 8) * 4
    # Every run, warm-up included, is in the profile with its kernel.
    spans = check_chrome_trace(json.loads((tmp_path / "t.json").read_text()))
    assert sum(s["name"] == "run dyn_mlp" for s in spans) == 55
    assert sum(s["name"] == "fused_addmm_relu_add" for s in spans) == 55


def test_bench_with_threads_runs_for_the_time_given(dynoc, dyn_mlp, tmp_path):
    p = dynoc("bench", dyn_mlp, "--shape", "x=1x16", "--shape", "y=1x8", "--threads", "2",
              "--time", "0.3", "--json", tmp_path / "b.json")
    assert p.returncode == 0, p.stderr
    b = json.loads((tmp_path / "b.json").read_text())
    assert b["threads"] == 2 and b["runs"] > 2 and 0.25 < b["seconds"] < 3


@pytest.mark.parametrize("args,error", [
    ((), "input 'x' has a dynamic dim 0: give its shape with --shape x=..."),
    (("--shape", "z=3x16"), "--shape 'z=3x16': the model has no input 'z' (its inputs: x, y)"),
    (("--shape", "x=3x17", "--shape", "y=3x8"),
     "--shape 'x=3x17': dim 1 of input 'x' is 16 in every graph of the model"),
    (("--shape", "x=3by16"), "--shape 'x=3by16' is not NAME=DIMxDIM... (e.g. x=8x3x224x224)"),
    (("--shape", "x=3x16", "--shape", "y=3x8", "--threads", "0"),
     "--threads must be at least 1; --warmup, --iterations and --time not negative"),
])
def test_bench_errors_name_the_input(dynoc, dyn_mlp, args, error):
    p = dynoc("bench", dyn_mlp, *args)
    assert p.returncode == 1
    assert p.stderr.strip() == f"dynoc bench: error: {error}"


def test_bench_of_a_missing_model(dynoc, tmp_path):
    p = dynoc("bench", tmp_path / "none.so")
    assert p.returncode == 1
    assert p.stderr.strip() == f"dynoc bench: error: model '{tmp_path / 'none.so'}' does not exist"
