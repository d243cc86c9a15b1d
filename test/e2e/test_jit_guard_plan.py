"""The C dispatcher's guard program (lib/capture/dispatcher.cpp, planned by
_dispatch.plan): each check must decide as the guard text it stands for,
and the module attribute checks it skips while nothing they read changed
(attr_snapshot.cpp) must run again after any change that could alter them."""
import gc
import weakref

import pytest
import torch

import dynoc
from dynoc import _region
from dynoc.capture import guards as _guards
from dynoc.jit import built as _built
from dynoc.jit import dispatch as _dispatch

from test_jit_dispatch import cache_env, tensor_cases  # noqa: F401 (an autouse fixture)


@pytest.fixture(scope="module")
def C():
    return _region._ext()


def dispatcher(C, names, bound, ops, residual=None):
    """A dispatcher of one variant whose run returns "ran"."""
    return C.Dispatcher(tuple(names), tuple(bound), {}, [(ops, residual, lambda L, G: "ran", None)],
                        _dispatch.MISS, _built.STALE, lambda i: "stale")


def guard_text(t, dtype, device, grad, size, stride):
    return (f"check_tensor(L['t'], {dtype}, device={device!r}, requires_grad={grad}, "
            f"size={list(size)}, stride={list(stride)})")


@pytest.mark.parametrize("case", range(len(tensor_cases())))
def test_a_tensor_check_decides_as_check_tensor(C, case):
    t, dtype, device, grad, size, stride = tensor_cases()[case]
    want = _guards.check_tensor(t, dtype, device, grad, size, stride)
    ops, rest = _dispatch.plan([guard_text(t, dtype, device, grad, size, stride)], ["t"])
    if rest:  # a size beyond int64: left to the Python check
        assert any(d is not None and d >= 2 ** 63 for d in size)
        return
    assert [op[0] for op in ops] == ["tensor"]
    got = dispatcher(C, ["t"], [], ops)(t)
    assert (got == "ran") is want


def test_plan_checks_the_guards_it_knows_in_c_and_leaves_the_rest():
    texts = ["check_tensor(L['x'], torch.float32, device='cpu', requires_grad=False, "
             "size=[1, 4], stride=[4, 1])",
             "___is_grad_enabled() == False",
             "torch.get_default_dtype() == torch.float32",
             "___hook_ids(L['self']) == ()",
             "L['self'].bn.eps == 1e-05",
             "L['self'].bn.running_mean is not None",
             "L['self'].mode is None",
             "L['x'].size()[0] == 1",
             "___G('math')['pi'] == 3.14",
             "L['self'].sizes == (1, 2)"]
    ops, rest = _dispatch.plan(texts, ["self", "x"])
    assert [op[0] for op in ops] == ["tensor", "call_eq", "call_eq", "no_hooks", "attr", "attr",
                                     "eq", "attr", "is_not", "attr", "is"]
    # L['self'].bn is loaded once, into slot 2, for both of its guards
    assert ops[4] == ("attr", 0, "bn") and ops[5] == ("attr", 2, "eps") and \
        ops[7] == ("attr", 2, "running_mean")
    assert rest == texts[7:]


class Scaled(torch.nn.Module):
    scale = 2.0  # a class attribute: the guard reads it through the type

    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)
        self.bn = torch.nn.BatchNorm1d(4)
        self.shift = 1.0

    def forward(self, x):
        return self.bn(self.lin(x)) * self.scale + self.shift


def change_instance_attr(m):
    m.shift = 3.0


def change_class_attr(m):
    Scaled.scale = 5.0


def change_submodule_attr(m):
    m.bn.eps = 0.5


def flip_training(m):
    m.bn.train()


def shadow_with_property(m):
    del m.shift
    Scaled.shift = property(lambda self: -1.0)


def replace_submodule(m):
    m.bn = torch.nn.BatchNorm1d(4).eval()
    m.bn.running_mean.fill_(0.5)


@pytest.mark.parametrize("change", [change_instance_attr, change_class_attr, change_submodule_attr,
                                    flip_training, shadow_with_property, replace_submodule])
def test_module_state_changes_are_seen_by_the_skipped_checks(change, monkeypatch):
    monkeypatch.setattr(Scaled, "scale", 2.0)
    monkeypatch.setattr(Scaled, "shift", None, raising=False)
    monkeypatch.delattr(Scaled, "shift")
    torch.manual_seed(0)
    m = Scaled().eval()
    cm = dynoc.compile(m)
    x = torch.randn(3, 4)
    with torch.no_grad():
        for _ in range(3):  # the third call skips the attribute checks
            torch.testing.assert_close(cm(x), m(x))
        assert cm._dynoc_region.compiled_calls() == 2
        change(m)
        want = m(x)
        for _ in range(3):
            torch.testing.assert_close(cm(x), want)
    # A submodule of the same configuration: the built graph reads its
    # weights (BuiltGraph.paths); any other change recompiles.
    assert len(cm._dynoc_region.variants) == (1 if change is replace_submodule else 2)


class Flag:
    """A value whose == answer changes without any dict changing."""
    def __init__(self):
        self.equal = True

    def __eq__(self, other):
        return self.equal

    __hash__ = None


def test_a_compare_of_a_mutable_value_is_never_skipped(C):
    m = torch.nn.Module()
    m.flag = Flag()
    d = dispatcher(C, ["self"], [m], [("attr", 0, "flag"), ("eq", 1, 5)])
    assert d() == "ran" and d() == "ran"
    m.flag.equal = False
    assert d() is _dispatch.MISS


def test_an_immutable_compare_is_skipped_until_its_dict_changes(C):
    m = torch.nn.Module()
    m.k = 5
    d = dispatcher(C, ["self"], [m], [("attr", 0, "k"), ("eq", 1, 5)])
    assert d() == "ran" and d() == "ran"
    m.k = 6
    assert d() is _dispatch.MISS
    m.k = 5
    assert d() == "ran"


def test_the_dispatcher_and_its_region_are_collected():
    def f(x):
        return x * 2 + 1

    cf = dynoc.compile(f)
    x = torch.ones(3)
    cf(x), cf(x)
    region = cf._dynoc_region if hasattr(cf, "_dynoc_region") else None
    assert region is None or region._fast
    ref = weakref.ref(f)
    del f, cf, region
    dynoc.reset()
    gc.collect()
    assert ref() is None


def test_a_malformed_dispatcher_is_an_error_not_a_crash(C):
    def make(variants, names=("x",), bound=()):
        return C.Dispatcher(names, bound, {}, variants, None, None, None)

    with pytest.raises(ValueError, match="unknown op 'nope'"):
        make([([("nope", 0)], None, None, None)])
    with pytest.raises(TypeError, match="op 'eq' takes 3 items"):
        make([([("eq", 0)], None, None, None)])
    with pytest.raises(ValueError, match="slot out of range"):
        make([([("eq", 3, 1)], None, None, None)])
    with pytest.raises(ValueError, match="direct input is no parameter"):
        make([([], None, None, (print, (4,)))])
    with pytest.raises(TypeError, match="a variant is"):
        make([(1, 2)])
    with pytest.raises(ValueError, match="more bound values"):
        make([], names=(), bound=(1,))


def test_same_versions_sees_an_in_place_change(C):
    a, b = torch.zeros(2), torch.zeros(3)
    versions = [a._version, b._version]
    assert C.same_versions([a, b], versions) is True
    b.add_(1)
    assert C.same_versions([a, b], versions) is False
    with pytest.raises(TypeError, match="same_versions"):
        C.same_versions([a], versions)


class Tied(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(4, 4, bias=False)
        self.b = torch.nn.Linear(4, 4, bias=False)
        self.b.weight = self.a.weight

    def forward(self, x):
        return self.b(torch.tanh(self.a(x)))


def test_replacing_one_owner_of_a_tied_weight_leaves_the_other():
    torch.manual_seed(0)
    m = Tied()
    cm = dynoc.compile(m)
    x = torch.randn(2, 4)
    with torch.no_grad():
        cm(x), cm(x)
        m.b = torch.nn.Linear(4, 4, bias=False)
        for _ in range(2):
            torch.testing.assert_close(cm(x), m(x))
    # The graph shares one weight between the two layers: no longer true,
    # so its calls run eagerly (logged under recompiles).
    assert cm._dynoc_region.compiled == [None]


def wrapped(func):
    """A decorator as transformers' (`*args, **kwargs`, the wrapped function
    a free variable)."""
    def wrapper(*args, **kwargs):
        return func(*args, **kwargs)
    return wrapper


class Wrapped(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)

    @wrapped
    def forward(self, x, scale=2.0, *, shift=1.0):
        return self.lin(x) * scale + shift


def test_a_wrapper_of_args_and_kwargs_with_a_closure_is_dispatched_in_c():
    torch.manual_seed(0)
    m = Wrapped()
    cm = dynoc.compile(m)
    x = torch.randn(3, 4)
    with torch.no_grad():
        for _ in range(3):
            torch.testing.assert_close(cm(x), m(x))
        region = cm._dynoc_region
        assert type(region._fast).__name__ == "Dispatcher"
        calls = region.compiled_calls()
        torch.testing.assert_close(cm(x), m(x))
        assert region.compiled_calls() == calls + 1  # through the dispatcher
        torch.testing.assert_close(cm(x, 3.0), m(x, 3.0))  # another variant
        torch.testing.assert_close(cm(x, shift=0.5), m(x, shift=0.5))  # general path


def defaults_and_keywords(x, y=None, scale=2.0, *, bias=1.0):
    return (x * scale + bias) if y is None else (x + y) * scale + bias


def test_defaults_and_keyword_only_defaults_fill_the_slots(C):
    cf = dynoc.compile(defaults_and_keywords)
    x, y = torch.randn(5), torch.randn(5)
    with torch.no_grad():
        for args in [(x,), (x,), (x, y), (x, y), (x, None, 3.0), (x, None, 3.0), (x,)]:
            torch.testing.assert_close(cf(*args), defaults_and_keywords(*args))
    region = _region.region_of(defaults_and_keywords) if hasattr(_region, "region_of") else None
    assert region is None or type(region._fast).__name__ == "Dispatcher"


def test_a_binding_that_does_not_describe_the_names_is_an_error(C):
    with pytest.raises(ValueError, match="does not describe the names"):
        C.Dispatcher(("a", "b"), (), {}, [], None, None, None, (1, (), False, (), False, ()))
    with pytest.raises(TypeError, match="cells are cells"):
        C.Dispatcher(("a", "f"), (), {}, [], None, None, None, (1, (), False, (), False, (3,)))
