"""In-place updates of views, recorded functionally (docs/capture.md, "Results
and side effects"): `shifted[..., 1:] = ...` and `shifted[..., 0] = start`
(T5's _shift_right), `y[1:3].mul_(2)`, a write into a slice of an argument
become slice_scatter/select_scatter of the base in the graph, so the call
compiles; a view read after its base changed through another view runs
eagerly instead of reading old elements."""
import warnings

import pytest
import torch

import dynoc


@pytest.fixture(autouse=True)
def _fresh_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("DYNOC_CACHE_DIR", str(tmp_path / "cache"))
    dynoc.reset()


def shift_right(ids, start):
    shifted = ids.new_zeros(ids.shape)
    shifted[..., 1:] = ids[..., :-1].clone()
    shifted[..., 0] = start
    shifted.masked_fill_(shifted == -100, 0)
    return shifted


def test_t5_style_label_shifting_compiles_and_matches_eager():
    f = dynoc.compile(shift_right)
    for _ in range(3):
        ids = torch.randint(0, 50, (2, 7))
        ids[0, 3] = -100
        torch.testing.assert_close(f(ids, 5), shift_right(ids, 5))
    assert f.compiled_calls() == 2


def test_updates_through_slices_rows_and_columns():
    def scale(x):
        y = x * 1.0
        row = y[1]
        row[2:].zero_()  # a view of a view
        r = row * 3  # the row, read after its own update
        y[2:4].mul_(2)
        y[:, 0] += 1
        return y, r

    f = dynoc.compile(scale)
    for _ in range(3):
        x = torch.randn(5, 4)
        for got, want in zip(f(x), scale(x)):
            torch.testing.assert_close(got, want)
    assert f.compiled_calls() == 2


def test_a_slice_of_an_argument_written_is_written_back():
    def record(x, buf):
        buf[1:3] = x.sum(0)[:2]
        return x + 1

    f = dynoc.compile(record)
    for _ in range(3):
        x, buf, want = torch.randn(3, 4), torch.zeros(5), torch.zeros(5)
        torch.testing.assert_close(f(x, buf), x + 1)
        record(x, want)
        torch.testing.assert_close(buf, want)
    assert f.compiled_calls() == 2


def test_a_view_read_after_its_base_changed_through_another_runs_eagerly():
    def through_another(x):
        y = x * 1
        a, b = y[0], y[0]
        b.add_(1)
        return a * 2  # a sees b's update in eager

    f = dynoc.compile(through_another)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(3):
            x = torch.randn(3, 4)
            torch.testing.assert_close(f(x), through_another(x))
    assert f.compiled_calls() == 0
    assert any("updated in place through another view" in str(w.message) for w in caught)
