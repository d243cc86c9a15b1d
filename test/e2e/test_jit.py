"""dynoc.compile in a plain process (docs/capture.md, "In the same process"):
the first call captures, the graph is built through the `dynoc build`
pipeline into a disk cache and loaded, and later calls whose guards pass run
the built code. Numerics against eager, the compiled code actually used
(dynoc.counters), the cache across processes, backends and the seed APIs'
run-time half."""
import json
import os
import subprocess
import sys
import textwrap
import warnings

import pytest
import torch

import dynoc
from dynoc import _logs
from dynoc.capture import session as capture_session
from dynoc.jit import built as _built
from dynoc.jit import training as _training



@pytest.fixture(scope="module")
def shared_cache(tmp_path_factory):
    """One cache for the tests that do not test the cache itself: each model
    is built once for the whole module."""
    return str(tmp_path_factory.mktemp("jit-cache"))


@pytest.fixture(autouse=True)
def cache_env(monkeypatch, shared_cache):
    monkeypatch.setenv("DYNOC_CACHE_DIR", shared_cache)
    monkeypatch.delenv("DYNOC_CACHE", raising=False)
    yield
    dynoc.reset()


class Mlp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(16, 32)
        self.fc2 = torch.nn.Linear(32, 4)

    def forward(self, x):
        return torch.softmax(self.fc2(torch.relu(self.fc1(x))), -1)


class ConvNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(8)
        self.fc = torch.nn.Linear(8, 5)

    def forward(self, x):
        h = torch.relu(self.bn(self.conv(x)))
        return self.fc(h.mean((2, 3)))


def compiled_calls(c):
    region = c._dynoc_region if isinstance(c, torch.nn.Module) else c
    return region.compiled_calls()


def test_a_compiled_module_runs_built_code_from_its_second_call():
    torch.manual_seed(0)
    m = Mlp().eval()
    cm = dynoc.compile(m)
    before = dict(dynoc.counters)
    with torch.no_grad():
        for i in range(4):
            x = torch.randn(8, 16)
            torch.testing.assert_close(cm(x), m(x), rtol=1e-5, atol=1e-6)
    assert compiled_calls(cm) == 3, "calls 2-4 run the built model"
    assert dynoc.counters["compiled_calls"] - before["compiled_calls"] == 3
    assert isinstance(cm._dynoc_region.compiled[0], _built.CompiledGraph)


def test_weights_live_in_the_modules_tensors():
    """No copy: an in-place update of a parameter (an optimizer step, a
    load_state_dict) is what the next compiled call reads, the packed
    convolution weight included; BatchNorm's running statistics in train
    mode are updated in the module's buffers as eager updates them."""
    torch.manual_seed(0)
    m, ref = ConvNet().train(), ConvNet().train()
    ref.load_state_dict(m.state_dict())
    cm = dynoc.compile(m)
    with torch.no_grad():
        for step in range(4):
            x = torch.randn(2, 3, 8, 8)
            torch.testing.assert_close(cm(x), ref(x), rtol=1e-4, atol=1e-5,
                                       msg=f"call {step}")
            for p, q in zip(m.parameters(), ref.parameters()):
                p.mul_(0.9)
                q.mul_(0.9)
    torch.testing.assert_close(m.bn.running_mean, ref.bn.running_mean)
    torch.testing.assert_close(m.bn.running_var, ref.bn.running_var)
    assert int(m.bn.num_batches_tracked) == int(ref.bn.num_batches_tracked) == 4
    assert compiled_calls(cm) == 3


def test_a_replaced_parameter_is_what_the_next_call_reads(monkeypatch, capsys):
    """`m.fc.weight = nn.Parameter(...)` (a new object, not an in-place
    update): the built graph is bound to the new tensor; one of another shape
    leaves the variant eager; a training graph runs eagerly from then on (the
    gradient would go to the old parameter), saying why."""
    monkeypatch.setattr(_logs, "_enabled", {"recompiles"})
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU())
    cm = dynoc.compile(m)
    x = torch.randn(2, 3)
    with torch.no_grad():
        cm(x), cm(x)
        m[0].weight = torch.nn.Parameter(torch.randn(4, 3))
        torch.testing.assert_close(cm(x), m(x))
        assert compiled_calls(cm) == 2
        m[0].weight = torch.nn.Parameter(torch.randn(4, 3))  # and again
        torch.testing.assert_close(cm(x), m(x))
        assert compiled_calls(cm) == 3
    assert "weight '0.weight' was replaced by another tensor of its shape" in \
        capsys.readouterr().err
    # Training: eager from the replacement on, with the gradient where eager's goes.
    t = torch.nn.Linear(3, 2)
    ct = dynoc.compile(t)
    for _ in range(2):
        ct(x).sum().backward()
    t.weight = torch.nn.Parameter(torch.zeros(2, 3))
    ct(x).sum().backward()
    torch.testing.assert_close(t.weight.grad, x.sum(0).expand(2, 3))
    assert "(a training graph): calls run eagerly" in capsys.readouterr().err


def test_an_input_the_region_changes_in_place_is_written_back():
    def accumulate(x, acc):
        acc.add_(x * 2)
        return acc.sum()

    f = dynoc.compile(accumulate)
    f(torch.ones(3), torch.zeros(3))
    acc = torch.full((3,), 1.0)
    out = f(torch.ones(3), acc)
    assert compiled_calls(f) == 1
    torch.testing.assert_close(acc, torch.full((3,), 3.0))
    assert out.item() == 9.0


def test_new_sizes_make_the_variant_dynamic_and_rebuild_it():
    torch.manual_seed(0)
    m = Mlp().eval()
    cm = dynoc.compile(m)
    with torch.no_grad():
        for batch in (8, 4, 6, 8):
            x = torch.randn(batch, 16)
            torch.testing.assert_close(cm(x), m(x), rtol=1e-5, atol=1e-6)
    region = cm._dynoc_region
    assert len(region.variants) == 1 and compiled_calls(cm) == 2


def test_a_size_used_as_a_number_is_an_input_not_a_pinned_constant():
    """`torch.arange(q) + offset` with the offset a size (transformers' mask
    code adds the cache length): the number is a 0-d input read at each
    call, so one dynamic variant serves every offset. A size that lands in
    an attribute (`x ** n`) is still pinned: a variant per value, each right."""
    def shifted(x, past):
        return x + (torch.arange(x.shape[0]) + past.shape[0])

    f = dynoc.compile(shifted)
    for n in (3, 4, 5, 9, 2):
        x, past = torch.randn(4), torch.zeros(n, 2)
        torch.testing.assert_close(f(x, past), shifted(x, past))
    assert len(f.variants) == 1 and compiled_calls(f) == 3

    def power(x, past):
        return x ** past.shape[0]

    g = dynoc.compile(power)
    for n in (2, 3, 3):
        x, past = torch.randn(4), torch.zeros(n)
        torch.testing.assert_close(g(x, past), power(x, past))
    assert len(g.variants) == 2 and compiled_calls(g) == 1


def test_a_size_forwarded_through_kwargs_keeps_its_source():
    """A decorator's `wrapper(*args, **kwargs)` passing a size on by keyword
    (transformers' mask functions): the size keeps its source through the
    **kwargs dict, so it is an input, not a constant a variant per value
    bakes in. A dict the wrapper changed passes no stale source."""
    def inner(x, off=0):
        return x + (torch.arange(3) + off)

    def wrapper(*args, **kwargs):
        return inner(*args, **kwargs)

    def overriding(*args, **kwargs):
        kwargs["off"] = 5
        return inner(*args, **kwargs)

    def forwarded(x, c):
        return wrapper(x, off=c.shape[0])

    def overridden(x, c):
        return overriding(x, off=c.shape[0])

    for fn, variants in ((forwarded, 1), (overridden, 1)):
        f = dynoc.compile(fn)
        for n in (3, 4, 5, 6):
            x, c = torch.randn(3), torch.zeros(n)
            torch.testing.assert_close(f(x, c), fn(x, c))
        assert len(f.variants) == variants and compiled_calls(f) == 2, fn.__name__


def test_a_mask_padded_to_alignment_and_sliced_back_stays_dynamic():
    """torch's SDPA on CUDA pads an attention mask to an aligned length and
    slices it back (`pad(m, (0, k))[..., :n]`, k the length modulo 8's
    complement): the pair is the mask itself, so the pad amount, which no
    affine expression of the length gives, does not keep each length apart."""
    # As in ATen's C++: an op whose decomposition pads and slices, its
    # arithmetic out of the evaluator's sight.
    lib = torch.library.Library("dynoc_test_align", "FRAGMENT")
    lib.define("aligned(Tensor m) -> Tensor")

    def aligned(m):
        n = m.shape[-1]
        return torch.nn.functional.pad(m, (0, (8 - n % 8) % 8))[..., :n]
    lib.impl("aligned", aligned, "CompositeImplicitAutograd")

    def attend(q, kv, mask):
        m = torch.ops.dynoc_test_align.aligned(mask)
        return torch.nn.functional.scaled_dot_product_attention(q, kv, kv, attn_mask=m)

    f = dynoc.compile(attend)
    for n in (17, 18, 19, 21):
        q, kv = torch.randn(1, 2, 1, 8), torch.randn(1, 2, n, 8)
        mask = torch.randn(1, 1, 1, n)
        torch.testing.assert_close(f(q, kv, mask), attend(q, kv, mask), rtol=1e-5, atol=1e-6)
    assert len(f.variants) == 1 and compiled_calls(f) == 2


def test_a_region_that_stays_eager_says_why(monkeypatch, capsys):
    """A graph break in a loop (not resumed after: test_jit_breaks.py), a
    user backend's region called with grad mode on: the calls run eagerly,
    the reason is logged under DYNOC_LOGS=graph_breaks and eager's results
    and gradients come out."""
    monkeypatch.setattr(_logs, "_enabled", {"graph_breaks"})

    def with_break(x):
        y = x + 1
        for _ in range(2):
            print("between the graphs")
            y = y + 1
        return y * 2

    f = dynoc.compile(with_break)
    for _ in range(2):
        torch.testing.assert_close(f(torch.ones(2)), torch.full((2,), 8.0))
    err = capsys.readouterr().err
    assert "with_break: calls run eagerly: 2 graph break(s)" in err
    assert "the break is inside a loop" in err
    assert compiled_calls(f) == 0

    # A user backend gets forward graphs only: with grad mode on, eager.
    torch.manual_seed(0)
    m = Mlp()
    cm = dynoc.compile(m, backend="eager")
    x = torch.randn(2, 16)
    for _ in range(2):
        cm(x).sum().backward()
    assert "its result requires grad and no backward graph was recorded" in \
        capsys.readouterr().err
    assert m.fc1.weight.grad is not None and compiled_calls(cm) == 0


def test_training_with_grad_mode_on_runs_built_forward_and_backward():
    """A module called with grad mode on: the first call records the
    backward too, and later calls run the built forward and, on
    loss.backward(), the built backward; SGD over 5 steps ends where eager's
    does, BatchNorm's running statistics included, and the program's own
    first backward is unaffected by the recording."""
    torch.manual_seed(0)
    m, ref = ConvNet().train(), ConvNet().train()
    ref.load_state_dict(m.state_dict())
    cm = dynoc.compile(m)
    opt = torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
    opt_ref = torch.optim.SGD(ref.parameters(), lr=0.1, momentum=0.9)
    for step in range(5):
        x, y = torch.randn(4, 3, 8, 8), torch.randint(0, 5, (4,))
        loss = torch.nn.functional.cross_entropy(cm(x), y)
        loss_ref = torch.nn.functional.cross_entropy(ref(x), y)
        torch.testing.assert_close(loss, loss_ref, rtol=1e-5, atol=1e-6, msg=f"step {step}")
        for o, l in ((opt, loss), (opt_ref, loss_ref)):
            o.zero_grad()
            l.backward()
            o.step()
    for (name, p), q in zip(m.named_parameters(), ref.parameters()):
        torch.testing.assert_close(p, q, rtol=1e-5, atol=1e-5, msg=name)
    torch.testing.assert_close(m.bn.running_mean, ref.bn.running_mean, rtol=1e-5, atol=1e-6)
    assert compiled_calls(cm) == 4
    assert isinstance(cm._dynoc_region.compiled[0], _training.TrainingGraph)


def test_gradients_reach_inputs_that_require_grad():
    def f(x, w):
        return (torch.sin(x) * w).sum(1)

    g = dynoc.compile(f)
    for _ in range(3):
        x, w = torch.randn(3, 4, requires_grad=True), torch.randn(4, requires_grad=True)
        g(x, w).sum().backward()
        torch.testing.assert_close(x.grad, torch.cos(x) * w)
        torch.testing.assert_close(w.grad, torch.sin(x).sum(0))
    assert compiled_calls(g) == 2


def test_a_global_tensor_rebound_after_the_build_is_not_read_stale():
    table = {"t": torch.arange(4.0)}

    def add_table(x):
        return x + table["t"]

    f = dynoc.compile(add_table)
    x = torch.ones(4)
    f(x)
    torch.testing.assert_close(f(x), x + table["t"])
    table["t"] = torch.zeros(4)
    torch.testing.assert_close(f(x), x)


def test_guard_fail_fn_and_guard_export_fn():
    fails, exports = [], []

    @dynoc.optimize("inductor", guard_fail_fn=fails.append, guard_export_fn=exports.append)
    def double(x):
        return x * 2

    double(torch.ones(3))
    double(torch.ones(3, dtype=torch.float64))
    assert len(exports) == 2
    assert any(t.startswith("check_tensor(L['x'], torch.float32") for t in exports[0])
    assert len(fails) == 1 and fails[0].orig_code is double.target.__code__
    assert fails[0].reason.startswith("check_tensor(L['x'], torch.float32")


def test_cache_size_limit_then_eager_with_a_warning(monkeypatch):
    monkeypatch.setattr(dynoc.config, "cache_size_limit", 2)
    f = dynoc.compile(lambda x, k: x * k)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for k in range(4):  # Python ints are specialized: a variant each
            assert f(torch.ones(2), k).tolist() == [k, k]
    assert len(f.variants) == 2
    told = [str(w.message) for w in caught if "cache_size_limit" in str(w.message)]
    # Once per region and reason, naming the guard that failed last.
    assert len(told) == 1 and "run eagerly, not compiled: it hit config.cache_size_limit " \
        "(2 variants); the last guard that failed: L['k'] == 1" in told[0], told
    stats = capture_session.current().eager_reasons  # what DYNOC_STATS writes
    assert any("cache_size_limit" in r["reason"] for r in stats)


def test_reset_forgets_compiled_code_and_run_never_captures():
    f = dynoc.compile(lambda x: x.exp())
    f(torch.ones(2))
    f(torch.ones(2))
    assert compiled_calls(f) == 1
    dynoc.reset()
    assert f.variants == [] and compiled_calls(f) == 0
    cached = dynoc.run(f)
    torch.testing.assert_close(cached(torch.zeros(2)), torch.ones(2))
    assert f.variants == [], "run() does not capture"
    f(torch.ones(2))
    torch.testing.assert_close(cached(torch.zeros(2)), torch.ones(2))
    assert compiled_calls(f) == 1, "run() uses the code compiled since"


def test_the_same_graph_captured_after_reset_comes_from_the_cache():
    model = torch.nn.Sequential(torch.nn.Linear(3, 5), torch.nn.Tanh())
    compiled = dynoc.compile(model)
    with torch.no_grad():
        compiled(torch.ones(3)), compiled(torch.ones(3))
        dynoc.reset()  # the next capture names its graph anew (graph_N)
        before = dict(dynoc.counters)
        compiled(torch.ones(3))
        torch.testing.assert_close(compiled(torch.ones(3)), model(torch.ones(3)))
    assert dynoc.counters["cache_hits"] == before["cache_hits"] + 1
    assert dynoc.counters["builds"] == before["builds"]


def test_user_backends_get_a_graph_module_of_the_recording():
    seen = []

    @dynoc.register_backend
    def counting(gm, example_inputs):
        seen.append((gm, [tuple(t.shape) for t in example_inputs]))
        return gm.forward

    assert "counting" in dynoc.list_backends()

    def f(x, y):
        return torch.sin(x) @ y, (x * y).sum()

    for backend in ("counting", "eager"):
        g = dynoc.compile(f, backend=backend)
        x, y = torch.randn(3, 3), torch.randn(3, 3)
        g(x, y)
        got = g(x, y)
        ref = f(x, y)
        torch.testing.assert_close(got[0], ref[0])
        torch.testing.assert_close(got[1], ref[1])
        assert compiled_calls(g) == 1
    gm, shapes = seen[0]
    assert isinstance(gm, torch.fx.GraphModule) and shapes == [(3, 3), (3, 3)]
    targets = {str(n.target) for n in gm.graph.nodes if n.op == "call_function"}
    assert {"aten.sin.default", "aten.mm.default"} <= targets


def test_a_variant_that_runs_eagerly_says_so_once_per_reason():
    """Never silently eager: the first call whose variant cannot be built
    warns with the region's place and the reason; later calls of it, and
    calls of another region for another reason, do not repeat the first."""
    def counts(x):
        counts.calls = getattr(counts, "calls", 0) + 1  # a lasting side effect
        return x + 1

    def fine(x):
        return x * 2

    c, d = dynoc.compile(counts), dynoc.compile(fine)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        for _ in range(3):
            c(torch.ones(2))
            d(torch.ones(2))
    said = [str(w.message) for w in seen if "run eagerly" in str(w.message)]
    assert len(said) == 1, said
    assert said[0].startswith("dynoc: calls of counts run eagerly, not compiled: it writes")
    assert seen[0].filename == __file__
    assert compiled_calls(d) == 2


def test_modes_and_options_are_said_once_not_ignored_silently():
    with pytest.warns(UserWarning, match="does not autotune"):
        dynoc.compile(lambda x: x, mode="max-autotune")
    with pytest.warns(UserWarning, match=r"options \['epilogue_fusion'\] are Inductor's"):
        dynoc.compile(lambda x: x, options={"epilogue_fusion": True})
    # torch.compile's own errors, from the installed torch's list of modes.
    with pytest.raises(RuntimeError, match="Unrecognized mode=fastest, should be one of: "):
        dynoc.compile(lambda x: x, mode="fastest")
    with pytest.raises(RuntimeError, match="Unexpected optimization option no_such_key, "
                                           "known options are"):
        dynoc.compile(lambda x: x, options={"no_such_key": True})
    with pytest.raises(RuntimeError, match="Either mode or options can be specified"):
        dynoc.compile(lambda x: x, mode="default", options={"epilogue_fusion": True})
    with pytest.warns(UserWarning, match="mode='lite' is an Inductor mode dynoc has no"):
        dynoc.compile(lambda x: x, mode="lite")


SCRIPT = textwrap.dedent("""\
    import sys, time, torch
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.GELU(), torch.nn.Linear(32, 8)).eval()
    c = torch.compile(m)
    x = torch.randn(4, 16)
    with torch.no_grad():
        t = time.perf_counter(); c(x); first = time.perf_counter() - t
        y = c(x)
        assert torch.allclose(y, m(x), atol=1e-6), "differs from eager"
    import dynoc
    print(torch.compile is dynoc.compile, dynoc.counters["compiled_calls"], f"{first:.3f}")
""")


def run_script(tmp_path, cache, extra_env=None, name="script.py"):
    path = tmp_path / name
    path.write_text(SCRIPT)
    env = dict(os.environ, DYNOC_TORCH_COMPILE="1", DYNOC_CACHE_DIR=str(cache),
               DYNOC_STATS=str(tmp_path / (name + ".stats.json")), **(extra_env or {}))
    p = subprocess.Popen([sys.executable, str(path)], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=env)
    return p, tmp_path / (name + ".stats.json")


def finish(p, stats):
    out, err = p.communicate(timeout=300)
    assert p.returncode == 0, err
    return out.split(), json.loads(stats.read_text())


def test_a_second_process_takes_the_build_from_the_cache(tmp_path):
    cache = tmp_path / "cache"
    out1, s1 = finish(*run_script(tmp_path, cache, name="a.py"))
    out2, s2 = finish(*run_script(tmp_path, cache, name="b.py"))
    assert out1[:2] == out2[:2] == ["True", "1"], "DYNOC_TORCH_COMPILE=1 routes torch.compile"
    assert (s1["builds"], s1["cache_hits"]) == (1, 0)
    assert (s2["builds"], s2["cache_hits"]) == (0, 1)
    assert float(out2[2]) < float(out1[2])
    assert len(os.listdir(cache)) == 1


def test_two_processes_building_one_entry_at_once(tmp_path):
    cache = tmp_path / "cache"
    a, b = run_script(tmp_path, cache, name="a.py"), run_script(tmp_path, cache, name="b.py")
    (out_a, _), (out_b, _) = finish(*a), finish(*b)
    assert out_a[:2] == out_b[:2] == ["True", "1"]
    entries = os.listdir(cache)
    assert len(entries) == 1 and not entries[0].startswith("."), entries
    assert sorted(os.listdir(cache / entries[0])) == ["graph.mlir", "model.so",
                                                     "model.weights.safetensors"]


def test_dynoc_cache_0_builds_without_the_cache(tmp_path):
    cache = tmp_path / "cache"
    out, stats = finish(*run_script(tmp_path, cache, {"DYNOC_CACHE": "0"}))
    assert out[:2] == ["True", "1"] and stats["builds"] == 1
    assert not cache.exists()


def test_a_transformers_model_compiled_in_process():
    transformers = pytest.importorskip("transformers")
    cfg = transformers.BertConfig(vocab_size=100, hidden_size=32, num_hidden_layers=2,
                                  num_attention_heads=4, intermediate_size=64,
                                  attn_implementation="eager")
    torch.manual_seed(0)
    model = transformers.BertModel(cfg).eval()
    cm = dynoc.compile(model)
    with torch.no_grad():
        for _ in range(3):
            ids = torch.randint(0, 100, (2, 12))
            got, ref = cm(input_ids=ids), model(input_ids=ids)
            torch.testing.assert_close(got.last_hidden_state, ref.last_hidden_state,
                                       rtol=1e-4, atol=1e-5)
    assert compiled_calls(cm) == 2, cm._dynoc_region.session.eager_reasons


def test_export_gives_one_graph_module_and_its_guards_or_names_the_break():
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU())
    builds = dynoc.counters["builds"]
    gm, guards = dynoc.export(m)(torch.randn(2, 4))
    x = torch.randn(2, 4)
    assert isinstance(gm, torch.fx.GraphModule)
    torch.testing.assert_close(gm(x), m(x))
    assert guards[0].startswith("check_tensor(L['input'], torch.float32")
    assert dynoc.counters["builds"] == builds, "export records, it does not build"

    def with_break(x):
        y = x + 1
        dynoc.graph_break()
        return y * 2

    with pytest.raises(dynoc.Unsupported, match=r"export\(.*with_break\): a graph break at "
                                                r".*test_jit.py:\d+: graph_break\(\) called"):
        dynoc.export(with_break)(torch.ones(2))


def test_a_backward_that_cannot_be_recorded_leaves_the_region_eager():
    class NoBackward(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            raise RuntimeError("this backward is never run by the program")

    def f(x, w):
        return NoBackward.apply(x * w).sum()

    g = dynoc.compile(f)
    x, w = torch.randn(3), torch.randn(3, requires_grad=True)
    for _ in range(2):
        torch.testing.assert_close(g(x, w), (x * w * 2).sum())
    assert compiled_calls(g) == 0
    assert g.session.eager_reasons[-1]["reason"] == \
        "recording its backward failed: RuntimeError: this backward is never run by the program"


def test_inference_mode_records_the_graph_no_grad_does():
    """Under torch.inference_mode() composite ops (conv2d, layer_norm, linear,
    dropout, scaled_dot_product_attention) reached the recorder whole, and
    their graphs did not build: the variant ran eagerly (issue 52). They are
    decomposed as the autograd path does, so the graph holds no_grad's ops,
    builds, and its built code runs."""
    class Block(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = torch.nn.Conv2d(3, 8, 3)
            self.norm = torch.nn.LayerNorm(8 * 6 * 6)
            self.fc = torch.nn.Linear(8 * 6 * 6, 4 * 16)
            self.drop = torch.nn.Dropout(0.1)

        def forward(self, x):
            h = self.fc(self.norm(torch.relu(self.conv(x)).flatten(1))).view(-1, 2, 4, 8)
            a = torch.nn.functional.scaled_dot_product_attention(h, h, h, is_causal=True)
            return self.drop(a)

    torch.manual_seed(0)
    model = Block().eval()
    x = torch.randn(2, 3, 8, 8)
    with torch.no_grad():
        want = model(x)
    graphs = {}
    for mode in (torch.no_grad, torch.inference_mode):
        dynoc.reset()
        compiled = dynoc.compile(model)
        with mode():
            got = [compiled(x) for _ in range(3)]
        for g in got:
            torch.testing.assert_close(g, want)
        assert compiled_calls(compiled) == 2, mode.__name__
        graphs[mode.__name__] = [n.op for g in compiled._dynoc_region.variant_graphs[0]
                                 for n in g.nodes]
    # The same ops (eval-mode dropout's decomposition copies its input where
    # autograd's path returns it).
    assert set(graphs["inference_mode"]) - {"aten.clone"} == set(graphs["no_grad"])
    assert "aten.linear" not in graphs["inference_mode"]


def test_an_inplace_metadata_op_records_its_view_op():
    """`q.t_()` on a computed tensor (nn.init.orthogonal_ does it) was recorded
    as `aten.t` with the input's type, a graph that did not build (`result 0
    has type tensor<5x3xf32>, but its operands give shape [3, 5]`) (issue 52).
    It records aten.t of the tensor as it was, and the built code runs."""
    def f(x):
        q = x * 2
        q.t_()
        r = q + 1
        r.unsqueeze_(0)
        return r

    c = dynoc.compile(f)
    x = torch.randn(3, 5)
    for _ in range(3):
        got = c(x)
    torch.testing.assert_close(got, f(x))
    assert got.shape == (1, 5, 3)
    assert compiled_calls(c) == 2


def test_first_calls_from_several_threads_capture_one_variant():
    """One capture at a time in the process: calls on other threads run
    eagerly meanwhile (before: each thread captured a variant of its own,
    with graphs mixed between them, and a backward failed to record);
    later calls run the one built variant."""
    from concurrent.futures import ThreadPoolExecutor
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.GELU(),
                                torch.nn.Linear(32, 4))
    cm = dynoc.compile(model)
    x = torch.randn(8, 16)

    def call(_):
        with torch.no_grad():
            return cm(x)
    with ThreadPoolExecutor(4) as pool:
        first = list(pool.map(call, range(16)))
        later = list(pool.map(call, range(16)))
    with torch.no_grad():
        want = model(x)
    for out in first + later:
        torch.testing.assert_close(out, want, rtol=1e-5, atol=1e-6)
    region = cm._dynoc_region
    assert len(region.variants) == 1
    assert region.compiled_calls() >= 16
