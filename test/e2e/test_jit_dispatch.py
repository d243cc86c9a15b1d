"""The per-call path of a compiled region (docs/capture.md, "The call
path"): the capture extension's check_tensor and attr must agree with the
Python they replace on every case, and the fast dispatcher must do what the
general path does (hooks, keyword calls, recompiles, in-place weight
changes), only sooner."""
import pytest
import torch

import dynoc
from dynoc import _region
from dynoc.capture import guards as _guards


@pytest.fixture(autouse=True)
def cache_env(monkeypatch, tmp_path_factory):
    monkeypatch.setenv("DYNOC_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "jit-cache"))
    yield
    dynoc.reset()


@pytest.fixture(scope="module")
def native():
    _region._ext()
    return _guards.native_check_tensor, _guards.native_attr


def tensor_cases():
    x = torch.ones(2, 3)
    marked = torch.ones(2, 3)
    torch._dynamo.mark_static(marked, 1)
    grad = torch.ones(2, 3, requires_grad=True)
    f32, f16 = torch.float32, torch.float16
    return [
        (x, f32, "cpu", False, [2, 3], [3, 1]),        # passes
        (x, f16, "cpu", False, [2, 3], [3, 1]),        # dtype
        (x, f32, "cuda", False, [2, 3], [3, 1]),       # device
        (x, f32, "meta", False, [2, 3], [3, 1]),       # another device type
        (x, f32, "cpu", True, [2, 3], [3, 1]),         # requires_grad
        (grad, f32, "cpu", True, [2, 3], [3, 1]),
        (x, f32, "cpu", False, [3, 2], [3, 1]),        # sizes
        (x, f32, "cpu", False, [2, 3, 1], [3, 1, 1]),  # rank
        (x.t(), f32, "cpu", False, [3, 2], [3, 1]),    # strides
        (x, f32, "cpu", False, [None, 3], [3, 1]),     # a dynamic dim
        (x, f32, "cpu", False, [2, None], [None, 1]),
        (marked, f32, "cpu", False, [2, None], [None, 1]),  # marked static: no
        (marked, f32, "cpu", False, [None, 3], [3, 1]),     # another dim: yes
        (3.0, f32, "cpu", False, [2, 3], [3, 1]),      # not a tensor
        (x, f32, "cpu", False, (2, 3), (3, 1)),        # tuples
        (torch.ones(()), f32, "cpu", False, [], []),   # 0-d
        (x, f32, "cpu", False, [2, 2 ** 70], [3, 1]),  # no int64 size
    ]


@pytest.mark.parametrize("case", range(len(tensor_cases())))
def test_check_tensor_in_c_agrees_with_python(native, case):
    t, dtype, device, grad, size, stride = tensor_cases()[case]
    want = _guards.check_tensor(t, dtype, device, grad, size, stride)
    c = native[0]
    assert c(t, dtype, device, grad, size, stride) is want
    # as guard texts write it (keywords), which first_failure evaluates
    assert c(t, dtype, device=device, requires_grad=grad, size=size, stride=stride) is want


def test_check_tensor_in_c_names_a_bad_call(native):
    c = native[0]
    with pytest.raises(TypeError, match="missing argument 'stride'"):
        c(torch.ones(1), torch.float32, "cpu", False, [1])
    with pytest.raises(TypeError, match="unexpected or repeated argument 'shape'"):
        c(torch.ones(1), torch.float32, "cpu", False, [1], shape=[1])
    with pytest.raises(TypeError, match="device must be a str"):
        c(torch.ones(1), torch.float32, None, False, [1], [1])


class Odd(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(2, 2)
        self.register_buffer("buf", torch.zeros(2))
        self.register_buffer("nothing", None)
        self.eps = 1e-5

    @property
    def broken(self):
        raise AttributeError("broken inside")


class OwnGetattr(torch.nn.Module):
    def __getattr__(self, name):
        if name == "virtual":
            return 42
        return super().__getattr__(name)


@pytest.mark.parametrize("name", ["lin", "buf", "nothing", "eps", "training", "forward",
                                  "missing", "broken"])
def test_attr_in_c_is_getattr(native, name):
    m = Odd()
    attr = native[1]
    try:
        want = getattr(m, name)
    except AttributeError as e:
        with pytest.raises(AttributeError) as got:
            attr(m, name)
        assert str(got.value) == str(e)
        return
    got = attr(m, name)
    assert got is want or got == want
    m.lin.weight = torch.nn.Parameter(torch.ones(2, 2))
    assert attr(m.lin, "weight") is m.lin.weight


def test_attr_in_c_leaves_other_lookups_to_python(native):
    attr = native[1]
    assert attr(OwnGetattr(), "virtual") == 42
    assert attr(torch.ones(2), "shape") == torch.Size([2])
    with pytest.raises(AttributeError):
        attr(object(), "nope")


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(4)
        self.fc = torch.nn.Linear(4, 2)

    def forward(self, x, scale=1.0):
        return self.fc(torch.relu(self.bn(self.conv(x))).mean((2, 3))) * scale


def test_hooks_registered_after_compiling_run(native):
    torch.manual_seed(0)
    m = Net().eval()
    cm = dynoc.compile(m)
    x = torch.randn(2, 3, 8, 8)
    seen = []
    with torch.no_grad():
        cm(x), cm(x)
        h1 = cm.register_forward_hook(lambda mod, a, out: seen.append("wrapper"))
        h2 = m.register_forward_pre_hook(lambda mod, a: seen.append("original"))
        h3 = m.fc.register_forward_hook(lambda mod, a, out: seen.append("fc"))
        got = cm(x)
        assert seen == ["original", "fc", "wrapper"]  # eager's order
        torch.testing.assert_close(got, m(x))
        for h in (h1, h2, h3):
            h.remove()
        seen.clear()
        cm(x)
        assert seen == []


def test_keyword_and_positional_calls_run_the_same_compiled_code():
    torch.manual_seed(0)
    m = Net().eval()
    cm = dynoc.compile(m)
    x = torch.randn(2, 3, 8, 8)
    with torch.no_grad():
        want = m(x)
        for call in (lambda: cm(x), lambda: cm(x), lambda: cm(x=x), lambda: cm(x, 1.0),
                     lambda: cm(x, scale=1.0)):
            torch.testing.assert_close(call(), want)
    assert cm._dynoc_region.compiled_calls() >= 4


def test_a_changed_attribute_recompiles_through_the_fast_path():
    torch.manual_seed(0)
    m = Net().eval()
    cm = dynoc.compile(m)
    x = torch.randn(2, 3, 8, 8)
    with torch.no_grad():
        cm(x), cm(x)
        m.bn.eps = 1e-3  # a guarded attribute of a submodule
        torch.testing.assert_close(cm(x), m(x))
        torch.testing.assert_close(cm(x), m(x))
        m.bn = torch.nn.BatchNorm2d(4).eval()  # a submodule replaced
        torch.testing.assert_close(cm(x), m(x))
        torch.testing.assert_close(cm(x), m(x))
    assert len(cm._dynoc_region.variants) >= 2


@pytest.mark.parametrize("mode", ["eval", "train"])
def test_in_place_weight_changes_reach_precomputed_weights(mode):
    """In eval mode the model folds BatchNorm into the convolution and packs
    its weight at load; an in-place change to any of them is seen on the
    next call, through the fast path."""
    torch.manual_seed(0)
    m, ref = Net(), Net()
    ref.load_state_dict(m.state_dict())
    getattr(m, mode)(), getattr(ref, mode)()
    cm = dynoc.compile(m)
    with torch.no_grad():
        for step in range(4):
            x = torch.randn(2, 3, 8, 8)
            torch.testing.assert_close(cm(x), ref(x), rtol=1e-4, atol=1e-5,
                                       msg=f"call {step}")
            for p, q in zip(list(m.parameters()) + list(m.buffers()),
                            list(ref.parameters()) + list(ref.buffers())):
                if p.is_floating_point():
                    p.mul_(0.9)
                    q.mul_(0.9)
    assert cm._dynoc_region.compiled_calls() == 3


def test_a_replaced_buffer_is_what_the_next_call_reads():
    """`m.bn.running_mean = torch.zeros(...)` (a new tensor object, not an
    in-place update): the built graph reads the new one; a buffer set to
    None leaves the variant eager, with eager's result."""
    torch.manual_seed(0)
    m = Net().eval()
    cm = dynoc.compile(m)
    x = torch.randn(2, 3, 8, 8)
    with torch.no_grad():
        cm(x), cm(x)
        m.bn.running_mean = torch.randn(4)
        m.bn.running_var = torch.rand(4) + 0.5
        torch.testing.assert_close(cm(x), m(x))
        assert cm._dynoc_region.compiled_calls() == 2
        m.bn.running_mean = torch.randn(4)
        torch.testing.assert_close(cm(x), m(x))
        assert cm._dynoc_region.compiled_calls() == 3
        m.bn.running_mean, m.bn.running_var = None, None  # batch statistics now
        torch.testing.assert_close(cm(x), m(x))


def test_a_function_of_no_arguments_runs_built_code_on_later_calls():
    """`dynoc.compile(lambda: torch.arange(3.))`: its second call made the
    dispatcher, which looked for a module in its first argument and raised
    IndexError (issue 52)."""
    c = dynoc.compile(lambda: torch.arange(3.0) * 2)
    before = dynoc.counters["compiled_calls"]
    for _ in range(3):
        torch.testing.assert_close(c(), torch.tensor([0.0, 2.0, 4.0]))
    assert dynoc.counters["compiled_calls"] - before == 2
