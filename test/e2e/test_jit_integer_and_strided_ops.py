"""Ops the OpInfo suite found running eagerly, now built on the CPU (issue 48):
GEMMs on integers and f64, integer division, remainder and fmod (a zero
divisor raises as in eager, never a number), any/all, max/min of a 0-d
tensor, as_strided, diagonal, masked_scatter, max pooling with ceil_mode and
on f64/integers, norms of every order, glu, clamps. Each compiles (counted)
and matches eager; an as_strided that addresses storage a graph value does
not hold runs eagerly with its reason."""
import pytest
import torch

import dynoc


@pytest.fixture(autouse=True)
def _fresh_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("DYNOC_CACHE_DIR", str(tmp_path / "cache"))
    dynoc.reset()


def ints(*shape, dtype=torch.int64, low=-9, high=10):
    return torch.randint(low, high, shape, dtype=dtype)


def run_twice(fn, *args):
    """fn compiled, called twice (the second call runs the built code);
    returns the compiled function and its last result."""
    f = dynoc.compile(fn)
    f(*args)
    return f, f(*args)


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.int8, torch.uint8, torch.float64])
def test_gemms_on_integers_and_f64_match_eager(dtype):
    def gemms(a, b, c, x, y):
        return a @ b, torch.addmm(c, a, b, beta=2, alpha=3), torch.bmm(x, y)

    low = 0 if dtype == torch.uint8 else -9
    args = (ints(5, 7, dtype=dtype, low=low), ints(7, 3, dtype=dtype, low=low),
            ints(5, 3, dtype=dtype, low=low), ints(2, 4, 6, dtype=dtype, low=low),
            ints(2, 6, 3, dtype=dtype, low=low))
    f, got = run_twice(gemms, *args)
    assert f.compiled_calls() == 1
    for g, w in zip(got, gemms(*args)):
        assert g.dtype == w.dtype
        torch.testing.assert_close(g, w, rtol=0, atol=0)  # int8: the same wrapped sums


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.int8])
def test_integer_division_remainder_and_fmod_match_eager(dtype):
    def divide(a, b):
        return (torch.div(a, b, rounding_mode="floor"), torch.div(a, b, rounding_mode="trunc"),
                torch.remainder(a, b), torch.fmod(a, b), a % 4, torch.fmod(a, -3),
                torch.div(a, -2, rounding_mode="floor"))

    a = ints(6, 5, dtype=dtype)
    b = ints(6, 5, dtype=dtype, low=1, high=6) * torch.tensor([1, -1, 1, -1, 1], dtype=dtype)
    f, got = run_twice(divide, a, b)
    assert f.compiled_calls() == 1
    for g, w in zip(got, divide(a, b)):
        torch.testing.assert_close(g, w, rtol=0, atol=0)


def test_integer_division_by_zero_raises_as_eager_does():
    def divide(a, b):
        return torch.div(a, b, rounding_mode="floor") + 1

    f = dynoc.compile(divide)
    a, b = ints(4), torch.tensor([1, 2, 3, 4])
    f(a, b), f(a, b)
    assert f.compiled_calls() == 1
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        divide(a, torch.tensor([1, 0, 3, 4]))
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        f(a, torch.tensor([1, 0, 3, 4]))
    torch.testing.assert_close(f(a, b), divide(a, b))  # the model still runs


def test_any_all_and_extrema_of_0d_tensors_match_eager():
    def truth(x, m, s):
        return (x.any(), x.any(dim=1), x.any(dim=-1, keepdim=True), x.all(dim=0),
                m.all(), m.any(), s.max(), s.min(), (x > 0).any(1))

    x = torch.randn(4, 5)
    x[1] = 0
    x[2, 3] = float("nan")
    m = torch.tensor([[0, 2], [3, 4]], dtype=torch.uint8)
    f, got = run_twice(truth, x, m, torch.tensor(2.5))
    assert f.compiled_calls() == 1
    for g, w in zip(got, truth(x, m, torch.tensor(2.5))):
        assert g.dtype == w.dtype  # any of uint8 is uint8, as in ATen
        torch.testing.assert_close(g, w)


def test_diagonal_and_as_strided_of_contiguous_tensors_compile():
    def views(x, y):
        return (x.diagonal(), x.diagonal(1), x.diagonal(-2, 0, 1), y.diagonal(0, 2, 0),
                torch.as_strided(x, (3, 2), (1, 5), 2), (x + 1).as_strided((2, 2), (6, 1)))

    x, y = torch.randn(4, 5), torch.randn(3, 4, 3)
    f, got = run_twice(views, x, y)
    assert f.compiled_calls() == 1
    for g, w in zip(got, views(x, y)):
        torch.testing.assert_close(g, w)


def test_masked_scatter_fills_the_masks_trues_in_order():
    def scatter(x, m, s):
        return x.masked_scatter(m, s) + 1

    x, m, s = torch.randn(3, 4), torch.rand(4) > 0.5, torch.randn(2, 6)
    m[0] = False  # a false before the first true
    f, got = run_twice(scatter, x, m, s)
    assert f.compiled_calls() == 1
    torch.testing.assert_close(got, scatter(x, m, s))


def test_as_strided_of_a_transposed_tensor_runs_eagerly_and_says_why():
    def transposed(x):
        return torch.as_strided(x.t(), (2, 3), (1, 2)) * 2

    x = torch.randn(3, 4)
    f = dynoc.compile(transposed)
    with pytest.warns(UserWarning, match="addresses storage"):
        f(x)
    for _ in range(2):  # never the dense copy's elements
        torch.testing.assert_close(f(x), transposed(x))
    assert f.compiled_calls() == 0
    report = str(dynoc.explain(transposed)(x))
    assert "not contiguous from the start of its storage" in report


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int64])
def test_max_pooling_with_ceil_mode_and_in_every_dtype(dtype):
    def pool(x):
        return (torch.nn.functional.max_pool2d(x, 3, 2, ceil_mode=True),
                torch.nn.functional.max_pool2d(x, 2, 2, padding=1, ceil_mode=True))

    x = ints(2, 3, 7, 8).to(dtype) if dtype == torch.int64 else torch.randn(2, 3, 7, 8, dtype=dtype)
    f, got = run_twice(pool, x)
    assert f.compiled_calls() == 1
    for g, w in zip(got, pool(x)):
        torch.testing.assert_close(g, w, rtol=0, atol=0)


def test_max_pool1d_with_ceil_mode():
    def pool(x):
        return torch.nn.functional.max_pool1d(x, 3, 2, ceil_mode=True)

    x = torch.randn(2, 3, 8)
    f, got = run_twice(pool, x)
    assert f.compiled_calls() == 1
    torch.testing.assert_close(got, pool(x), rtol=0, atol=0)


def test_norms_of_every_order_glu_and_clamps():
    def misc(x, lo, hi):
        return (torch.norm(x, p=3, dim=1), torch.linalg.vector_norm(x, ord=float("inf"), dim=0),
                torch.linalg.vector_norm(x, ord=1), torch.linalg.vector_norm(x, ord=0, dim=1),
                torch.linalg.vector_norm(x, ord=-float("inf"), dim=1, keepdim=True),
                torch.nn.functional.glu(x, dim=1), torch.clamp_min(x, lo), torch.clamp_max(x, hi),
                torch.nn.functional.normalize(x, dim=1), torch.clamp(x, min=-0.5),
                torch.clamp(x, -0.3, 0.4), torch.clamp(x, max=0.1))

    x, lo, hi = torch.randn(4, 6), torch.randn(6), torch.randn(4, 1)
    x[0, 1] = 0
    f, got = run_twice(misc, x, lo, hi)
    assert f.compiled_calls() == 1
    for g, w in zip(got, misc(x, lo, hi)):
        torch.testing.assert_close(g, w)
