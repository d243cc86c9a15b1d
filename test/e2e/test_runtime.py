"""libdynrt from Python (dynoc.load) and from the C++ serving example."""
import json
import os
import re
import threading

import pytest
import torch
from safetensors.torch import load_file

from conftest import ROOT, run

MODELS = os.path.join(ROOT, "test", "models")
SERVING = os.path.join(ROOT, "bazel-bin", "examples", "serving", "serving")
LIBDYNRT = os.path.join(ROOT, "bazel-bin", "lib", "runtime", "libdynrt.so")


def reference(x, y):
    w = load_file(os.path.join(MODELS, "dyn_mlp.safetensors"))
    return torch.relu(x @ w["fc.weight"].T + w["fc.bias"]) + y


def test_import_dynoc_from_the_project_environment(python):
    # The README's set-up makes `import dynoc` work in .venv, with the runtime.
    p = python("-c", "import dynoc; print(dynoc.load.__module__, dynoc.runtime.model._dynrt.__name__)",
               cwd="/")
    assert p.returncode == 0, p.stderr
    assert p.stdout.split() == ["dynoc.runtime.model", "_dynrt"]


def test_load_runs_with_dynamic_batch_and_zero_copy_inputs(dyn_mlp):
    import dynoc
    m = dynoc.load(dyn_mlp)
    for batch in (1, 7, 32):
        x, y = torch.randn(batch, 16), torch.randn(batch, 8)
        out = m(x, y)
        assert isinstance(out, torch.Tensor) and out.shape == (batch, 8)
        torch.testing.assert_close(out, reference(x, y), rtol=1e-5, atol=1e-5)
    # A non-contiguous input is made contiguous rather than refused.
    xt = torch.randn(16, 5).T
    torch.testing.assert_close(m(xt, torch.zeros(5, 8)), reference(xt, torch.zeros(5, 8)),
                               rtol=1e-5, atol=1e-5)


def test_guard_failure_raises_with_the_guards_words(dyn_mlp):
    import dynoc
    m = dynoc.load(dyn_mlp)
    with pytest.raises(dynoc.GuardError) as e:
        m(torch.randn(3, 12), torch.randn(3, 8))
    assert str(e.value) == (
        "guard failed: input 'x': size()[1] == 16, got 12 (guard: check_tensor(L['x'], "
        "torch.float32, device='cpu', requires_grad=False, size=[None, 16], stride=[16, 1]))")
    with pytest.raises(dynoc.GuardError, match=r"dtype == float32, got float64"):
        m(torch.randn(3, 16, dtype=torch.float64), torch.randn(3, 8))
    with pytest.raises(TypeError, match="takes 2 tensors, got 1"):
        m(torch.randn(3, 16))


def test_load_errors_are_python_exceptions(tmp_path):
    import dynoc
    with pytest.raises(dynoc.Error, match=r"model '/no/such.so' does not exist"):
        dynoc.load("/no/such.so")
    bad = tmp_path / "bad.so"
    bad.write_bytes(b"\x7fELF garbage")
    with pytest.raises(dynoc.Error, match=r"cannot load model .*bad.so'"):
        dynoc.load(bad)


def test_python_threads_share_one_model(dyn_mlp):
    import dynoc
    m = dynoc.load(dyn_mlp)
    errors = []

    def work(seed):
        g = torch.Generator().manual_seed(seed)
        for i in range(200):
            b = 1 + (seed + i) % 9
            x, y = torch.randn(b, 16, generator=g), torch.randn(b, 8, generator=g)
            if not torch.allclose(m(x, y), reference(x, y), rtol=1e-5, atol=1e-5):
                errors.append((seed, i))

    threads = [threading.Thread(target=work, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_output_structure_is_rebuilt(dynoc, tmp_path):
    import dynoc as dynoc_py
    script = tmp_path / "structured.py"
    script.write_text(
        "import torch\n"
        "def f(x):\n"
        "    return {'double': x * 2, 'pair': (torch.relu(x), x.neg())}\n"
        "print(torch.compile(f)(torch.ones(2, 3)).keys())\n")
    dynoc("capture", script, "-o", tmp_path / "out", check=True)
    dynoc("build", tmp_path / "out" / "graph_0.mlir", "-o", tmp_path / "s.so", check=True)
    x = torch.randn(2, 3)
    out = dynoc_py.load(tmp_path / "s.so")(x)
    assert set(out) == {"double", "pair"} and isinstance(out["pair"], tuple)
    torch.testing.assert_close(out["double"], x * 2)
    torch.testing.assert_close(out["pair"][0], torch.relu(x))
    torch.testing.assert_close(out["pair"][1], -x)


def test_serving_example_reports_latency_percentiles(dyn_mlp):
    p = run(SERVING, dyn_mlp, "--threads", "4", "--requests", "400", "--batch", "1,8")
    assert p.returncode == 0, p.stderr
    assert "run latency (us):     p50 " in p.stdout and " p99 " in p.stdout
    assert "failed: 0" in p.stdout
    bad = run(SERVING, dyn_mlp, "--threads")
    assert bad.returncode == 2 and bad.stderr.startswith("usage: ")


def test_libdynrt_depends_on_no_python_torch_or_mlir():
    deps = run("ldd", LIBDYNRT, check=True).stdout
    for lib in ("python", "torch", "MLIR", "LLVM", "dnnl", "gomp"):
        assert lib not in deps, deps


def test_libdynrt_exports_every_function_of_the_c_api():
    # What a C program linking -ldynrt resolves: every dynrt_* declared in dynrt.h.
    header = open(os.path.join(ROOT, "lib", "runtime", "include", "dynrt", "dynrt.h")).read()
    declared = set(re.findall(r"\b(dynrt_[a-z0-9_]+)\s*\(", header))
    exported = set(re.findall(r" T (dynrt_\w+)", run("nm", "-D", LIBDYNRT, check=True).stdout))
    assert len(declared) > 20
    assert declared - exported == set()


def _build(tmp_path, *args):
    out = tmp_path / f"m{len(list(tmp_path.iterdir()))}.so"
    p = run(os.path.join(ROOT, "bazel-bin", "tools", "dynoc", "dynoc"), "build",
            os.path.join(MODELS, "dyn_mlp.mlir"), "-o", out, *args)
    assert p.returncode == 0, p.stderr
    return out


def test_cpu_level_is_recorded_and_a_cpu_without_it_is_refused(tmp_path, monkeypatch):
    import dynoc
    v3 = _build(tmp_path, "--cpu=x86-64-v3")
    build = dynoc.load(v3).manifest["build"] if _cpu_has("avx2", "fma", "bmi2") else None
    # A CPU without AVX2 (faked: DYNRT_CPU_FEATURES is what the runtime sees).
    monkeypatch.setenv("DYNRT_CPU_FEATURES", "popcnt,sse4.2,avx")
    with pytest.raises(dynoc.Error, match=r"built for CPU 'x86-64-v3' and this CPU lacks "
                                          r"avx2, fma, bmi, bmi2, f16c, lzcnt, movbe"):
        dynoc.load(v3)
    v4 = _build(tmp_path, "--cpu=x86-64-v4")
    monkeypatch.setenv("DYNRT_CPU_FEATURES", "popcnt,sse4.2,avx,avx2,fma,bmi,bmi2,f16c,lzcnt,movbe")
    with pytest.raises(dynoc.Error, match=r"this CPU lacks avx512f, avx512bw, avx512cd, "
                                          r"avx512dq, avx512vl \(rebuild it with"):
        dynoc.load(v4)
    # `dynoc inspect` still shows what such a model is, with a note.
    p = run(os.path.join(ROOT, "bazel-bin", "tools", "dynoc", "dynoc"), "inspect", v4)
    assert p.returncode == 0 and "this CPU lacks avx512f" in p.stderr, p.stderr
    assert json.loads(p.stdout)["build"]["cpu"] == "x86-64-v4"
    if build is not None:  # this CPU runs x86-64-v3 code: the record is in the manifest
        assert build["cpu"] == "x86-64-v3" and "-march=x86-64-v3" in build["compile_flags"]
        assert build["dynoc_version"] == dynoc.__version__
        assert "avx2" in build["cpu_features"] and "libdnnl" in build["libraries"]


def _cpu_has(*features):
    flags = open("/proc/cpuinfo").read()
    return all(f" {f}" in flags for f in features)


def test_generic_build_runs_and_matches_eager(tmp_path):
    import dynoc
    m = dynoc.load(_build(tmp_path, "--cpu=generic"))
    assert m.manifest["build"]["cpu"] == "generic" and m.manifest["build"]["cpu_features"] == []
    x, y = torch.randn(5, 16), torch.randn(5, 8)
    torch.testing.assert_close(m(x, y), reference(x, y), rtol=1e-5, atol=1e-5)


PREPARE_GRAPH = """\
func.func @graph_0(%x: tensor<2x3xf32>, %t: tensor<4x3xf32>, %i: tensor<2xi64>) -> tensor<2x3xf32> attributes {dynoc.inputs = [{kind = "user", name = "L['x']"}, {kind = "parameter", name = "table"}, {kind = "constant", name = "idx"}], dynoc.weights = "weights.safetensors"} {
  %e = aten.embedding %t, %i : (tensor<4x3xf32>, tensor<2xi64>) -> tensor<2x3xf32>
  %y = aten.add.Tensor %x, %e : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}
"""


@pytest.mark.parametrize("index,error", [(3, None), (7, "graph 'graph_0__prepare' failed with code 3")])
def test_prepare_function_runs_once_at_load(dynoc, tmp_path, index, error):
    """The embedding reads weights alone, so it runs in the prepare function at
    load; a prepare function that fails (an index outside the table) fails the
    load with a status naming it, not the first call."""
    import dynoc as dy
    from safetensors.torch import save_file
    table = torch.randn(4, 3)
    save_file({"table": table, "idx": torch.tensor([1, index])}, tmp_path / "weights.safetensors")
    (tmp_path / "g.mlir").write_text(PREPARE_GRAPH)
    b = dynoc("build", tmp_path / "g.mlir", "-o", tmp_path / "m.so", check=True)
    assert "1 op(s) on weights alone run once at load (graph_0__prepare)" in b.stderr
    if error:
        with pytest.raises(dy.Error, match=re.escape(error)):
            dy.load(tmp_path / "m.so")
        return
    m = dy.load(tmp_path / "m.so")
    assert [i["kind"] for i in m.manifest["graphs"][0]["inputs"]] == \
        ["user", "parameter", "constant", "prepared"]
    x = torch.randn(2, 3)
    torch.testing.assert_close(m(x), x + table[[1, index]])


def test_a_buffer_the_graph_updates_carries_over_between_calls(dynoc, tmp_path):
    """A module that updates a buffer in place (a running mean) is captured
    with the update as a mutation; the loaded model keeps its own copy of the
    buffer, so each call sees the last one's update, as the module does. Two
    loads keep separate state, and the weights file is left as it was."""
    import dynoc as dy
    script = tmp_path / "ema.py"
    script.write_text(
        "import torch\n"
        "class Ema(torch.nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.register_buffer('avg', torch.zeros(3))\n"
        "    def forward(self, x):\n"
        "        self.avg.mul_(0.5).add_(x.mean(0), alpha=0.5)\n"
        "        return x - self.avg\n"
        "torch.manual_seed(0)\n"
        "m = Ema()\n"
        "print(torch.compile(m)(torch.randn(4, 3)).shape)\n")
    dynoc("capture", script, "-o", tmp_path / "out", check=True)
    b = dynoc("build", tmp_path / "out" / "graph_0.mlir", "-o", tmp_path / "m.so", check=True)
    assert "on weights alone" not in b.stderr
    saved = load_file(tmp_path / "out" / "weights.safetensors")["avg"]
    first, second = dy.load(tmp_path / "m.so"), dy.load(tmp_path / "m.so")
    avg = saved.clone()
    for _ in range(3):
        x = torch.randn(4, 3)
        avg = avg * 0.5 + x.mean(0) * 0.5
        torch.testing.assert_close(first(x), x - avg)
    x = torch.randn(4, 3)
    torch.testing.assert_close(second(x), x - (saved * 0.5 + x.mean(0) * 0.5))
    torch.testing.assert_close(load_file(tmp_path / "m.weights.safetensors")["avg"], saved)


def test_written_convolution_weights_are_used_on_the_next_call(dynoc, tmp_path):
    """The CPU convolutions keep their weights packed in oneDNN's layout
    between calls; each write of a weight (dynoc.LoadedModel.write_weight,
    dynrt_model_write_weight) makes them pack it again (the model's
    dynoc_model_weight_changed, docs/runtime.md): three writes in a row give
    eager's outputs for the new weights each time."""
    import dynoc as dy
    script = tmp_path / "cnn.py"
    script.write_text(
        "import torch\n"
        "torch.manual_seed(0)\n"
        "m = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.ReLU(),\n"
        "                        torch.nn.Conv2d(8, 4, 3, stride=2)).eval()\n"
        "with torch.no_grad():\n"
        "    print(torch.compile(m)(torch.randn(2, 3, 10, 10)).shape)\n")
    dynoc("capture", script, "-o", tmp_path / "out", check=True)
    dynoc("build", tmp_path / "out" / "graph_0.mlir", "-o", tmp_path / "m.so", check=True)
    model = dy.load(tmp_path / "m.so")
    weights = load_file(tmp_path / "out" / "weights.safetensors")
    x = torch.randn(2, 3, 10, 10)

    def eager(w0, w2):
        h = torch.relu(torch.nn.functional.conv2d(x, w0, weights["0.bias"], padding=1))
        return torch.nn.functional.conv2d(h, w2, weights["2.bias"], stride=2)

    w0, w2 = weights["0.weight"], weights["2.weight"]
    torch.testing.assert_close(model(x), eager(w0, w2))
    for i in range(3):
        w0 = torch.randn_like(w0)
        model.write_weight("0.weight", w0)
        if i == 1:
            w2 = torch.randn_like(w2)
            model.write_weight("2.weight", w2)
        torch.testing.assert_close(model(x), eager(w0, w2), msg=f"after write {i}")


def test_bound_weights_are_read_and_written_in_the_callers_memory(dynoc, tmp_path):
    """dynrt_model_bind_weight (LoadedModel.bind_weight): the model reads a
    bound weight in the caller's tensor, sees an in-place change once it is
    bound again (the packed convolution weight too), writes a buffer it
    updates into the caller's tensor, and refuses a tensor of another shape."""
    import dynoc as dy
    script = tmp_path / "cnn_ema.py"
    script.write_text(
        "import torch\n"
        "class M(torch.nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.conv = torch.nn.Conv2d(3, 4, 3)\n"
        "        self.register_buffer('avg', torch.zeros(4))\n"
        "    def forward(self, x):\n"
        "        y = self.conv(x)\n"
        "        self.avg.mul_(0.5).add_(y.mean((0, 2, 3)), alpha=0.5)\n"
        "        return y - self.avg[:, None, None]\n"
        "torch.manual_seed(0)\n"
        "with torch.no_grad():\n"
        "    print(torch.compile(M())(torch.randn(2, 3, 8, 8)).shape)\n")
    dynoc("capture", script, "-o", tmp_path / "out", check=True)
    dynoc("build", tmp_path / "out" / "graph_0.mlir", "-o", tmp_path / "m.so", check=True)
    model = dy.load(tmp_path / "m.so")
    w = {n: t.clone() for n, t in load_file(tmp_path / "out" / "weights.safetensors").items()}
    for name, t in w.items():
        model.bind_weight(name, t)
    x = torch.randn(2, 3, 8, 8)
    for step in range(3):
        if step == 2:
            w["conv.weight"].mul_(-1)  # changed in place: bound again
            model.bind_weight("conv.weight", w["conv.weight"])
        avg = w["avg"].clone()
        y = torch.nn.functional.conv2d(x, w["conv.weight"], w["conv.bias"])
        avg = avg * 0.5 + y.mean((0, 2, 3)) * 0.5
        torch.testing.assert_close(model(x), y - avg[:, None, None], msg=f"step {step}")
        torch.testing.assert_close(w["avg"], avg, msg="the buffer is updated in place")
    with pytest.raises(dy.Error, match="weight 'conv.bias' has shape"):
        model.bind_weight("conv.bias", torch.zeros(5))


EMBED_GRAPH = """\
func.func @graph_0(%ids: tensor<?xi64>, %t: tensor<4x3xf32>) -> tensor<?x3xf32> attributes {dynoc.inputs = [{kind = "user", name = "L['ids']"}, {kind = "parameter", name = "table"}], dynoc.weights = "weights.safetensors"} {
  %e = aten.embedding %t, %ids : (tensor<4x3xf32>, tensor<?xi64>) -> tensor<?x3xf32>
  return %e : tensor<?x3xf32>
}
"""


def test_serving_example_makes_int64_requests_and_reports_peak_rss(dynoc, tmp_path):
    """Token ids are int64: the serving example makes them (in [0, 4)), so it
    serves BERT- and GPT-2-like models, and prints its own peak memory."""
    from safetensors.torch import save_file
    save_file({"table": torch.randn(4, 3)}, tmp_path / "weights.safetensors")
    (tmp_path / "g.mlir").write_text(EMBED_GRAPH)
    dynoc("build", tmp_path / "g.mlir", "-o", tmp_path / "m.so", check=True)
    p = run(SERVING, tmp_path / "m.so", "--threads", "2", "--requests", "50", "--batch", "1,5")
    assert p.returncode == 0, p.stderr
    assert "failed: 0" in p.stdout
    assert re.search(r"^peak RSS: [\d.]+ MiB$", p.stdout, re.M), p.stdout
