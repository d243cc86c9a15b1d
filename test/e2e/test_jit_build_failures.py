"""When dynoc cannot build (no dynoc binary, one that does not run, a failed
build), a user is told once per reason on stderr and the calls keep eager's
numbers; dynoc.compile(..., fullgraph=True) raises dynoc.BuildFailed instead
(issue 53)."""
import stat
import warnings

import pytest
import torch

import dynoc
from dynoc.jit import built as _built


@pytest.fixture(autouse=True)
def no_cache(monkeypatch):
    # Nothing from a cache: each call of a new region tries a build.
    monkeypatch.setenv("DYNOC_CACHE", "0")
    monkeypatch.setattr(_built, "_identity", None)
    yield
    dynoc.reset()


def eager_warnings(run):
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        run()
    return [str(w.message) for w in seen if "run eagerly" in str(w.message)]


def test_a_missing_binary_is_said_once_for_every_region(monkeypatch, tmp_path):
    missing = tmp_path / "no" / "dynoc"
    monkeypatch.setenv("DYNOC_BIN", str(missing))
    first, second = dynoc.compile(lambda x: x * 2), dynoc.compile(lambda x: x - 1)
    x = torch.arange(4.0)
    before = dict(_built.counters)

    def run():
        for _ in range(2):
            assert torch.equal(first(x), x * 2)
            assert torch.equal(second(x), x - 1)
    said = eager_warnings(run)
    assert len(said) == 1, said
    assert f"the dynoc binary is not at {missing}" in said[0]
    assert _built.counters["eager_variants"] - before["eager_variants"] == 2
    assert _built.counters["compiled_calls"] == before["compiled_calls"]


def test_a_binary_that_cannot_run_names_the_loader_error(monkeypatch, tmp_path):
    # What a dynoc binary missing its shared libraries prints (exit 127).
    fake = tmp_path / "dynoc"
    fake.write_text("#!/bin/sh\necho \"$0: error while loading shared libraries: "
                    "libMLIR.so.16: cannot open shared object file\" >&2\nexit 127\n")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("DYNOC_BIN", str(fake))
    said = eager_warnings(lambda: dynoc.compile(lambda x: x + 3)(torch.ones(3)))
    assert len(said) == 1, said
    assert "dynoc build failed: " in said[0] and "libMLIR.so.16" in said[0], said[0]
    assert "`dynoc doctor` lists what this machine lacks" in said[0]


def test_fullgraph_raises_instead_of_running_eagerly(monkeypatch, tmp_path):
    monkeypatch.setenv("DYNOC_BIN", str(tmp_path / "missing"))
    f = dynoc.compile(lambda x: x.sin(), fullgraph=True)
    with pytest.raises(dynoc.BuildFailed, match="the dynoc binary is not at .*missing"):
        f(torch.ones(2))
    # A reason of the code, not the machine, is no BuildFailed: fullgraph
    # regions still raise Unsupported for breaks, as Dynamo.
    assert issubclass(dynoc.BuildFailed, RuntimeError)


def test_a_failed_build_of_a_working_binary_names_the_compiler(monkeypatch):
    # The toolchain's C++ compiler missing: the build's own message.
    monkeypatch.setenv("CXX", "no-such-compiler-anywhere")
    said = eager_warnings(lambda: dynoc.compile(lambda x: x.exp() + 1)(torch.ones(3)))
    assert len(said) == 1, said
    assert "no-such-compiler-anywhere" in said[0] and "not found" in said[0], said[0]
