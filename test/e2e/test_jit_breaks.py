"""Graph breaks in the same process (docs/capture.md, "Graph breaks in the
same process"): a region that breaks runs its graph before the break
compiled, the breaking call natively and the rest through a resume function,
itself compiled; results, printed output and exceptions are eager's."""
import json
import os
import subprocess
import sys

import pytest
import torch

import dynoc
from dynoc import _logs
from dynoc.jit import built as _built

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


@pytest.fixture(autouse=True)
def _fresh_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("DYNOC_CACHE_DIR", str(tmp_path / "cache"))
    dynoc.reset()


def compiled_calls(region):
    return region._dynoc_region.compiled_calls() if hasattr(region, "_dynoc_region") \
        else region.compiled_calls()


class Inner(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(8, 8)

    def forward(self, x):
        y = self.lin(x).sin()
        print("inner ran")
        return y + 1


norms = []


@dynoc.disable
def note_norm(t):
    norms.append(float(t.norm()))


class WithBreaks(torch.nn.Module):
    """A print in a submodule, a disabled function, graph_break() and a print
    in the forward itself: four breaks, each resumed after."""

    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(8, 8)
        self.inner = Inner()
        self.b = torch.nn.Linear(8, 4)

    def forward(self, x, scale=2.0):
        h = torch.relu(self.a(x))
        g = self.inner(h)
        note_norm(g)
        z = self.b(g) * scale
        dynoc.graph_break()
        w = z.cos()
        print("shape", tuple(w.shape))
        return {"z": z, "w": w * 3}


def test_each_break_is_resumed_after_and_every_part_is_compiled(capsys):
    torch.manual_seed(0)
    m = WithBreaks().eval()
    cm = dynoc.compile(m)
    before = dict(_built.counters)
    with torch.no_grad():
        for _ in range(6):
            x = torch.randn(3, 8)  # new values each call: nothing is baked in
            got, want = cm(x, scale=3.0), m(x, scale=3.0)
            for k in want:
                torch.testing.assert_close(got[k], want[k], rtol=1e-5, atol=1e-5)
    out = capsys.readouterr().out
    # Each call printed what eager prints, in eager's order.
    assert out == "inner ran\nshape (3, 4)\n" * 12
    # Call 1 captures; each later call compiles one more resume function
    # (one per break); from call 5 on, every part runs built code.
    calls = _built.counters["compiled_calls"] - before["compiled_calls"]
    assert calls == 1 + 2 + 3 + 4 + 5, calls
    builds = _built.counters["builds"] - before["builds"]
    # The graphs before the first, third and fourth breaks and after the
    # last (nothing runs between the inner call and note_norm's).
    assert builds == 4, builds


def test_values_and_arguments_cross_the_break():
    """Locals, keyword arguments and a returned argument (the same object)."""

    def f(x, n, *, k=3):
        a = x * n
        dynoc.graph_break()
        return a + k, [a, x]

    cf = dynoc.compile(f)
    with torch.no_grad():
        for i in range(4):
            x = torch.randn(5)
            got, want = cf(x, 2, k=5), f(x, 2, k=5)
            torch.testing.assert_close(got[0], want[0])
            torch.testing.assert_close(got[1][0], want[1][0])
            assert got[1][1] is x
    assert compiled_calls(cf) == 1 + 2 + 2


def test_a_number_from_item_that_changes_leaves_the_rest_eager(monkeypatch, capsys):
    """The resume function is specialized on the Python number .item() gave:
    when it changes, its calls run eagerly (no build per value), and say so."""
    monkeypatch.setattr(_logs, "_enabled", {"recompiles"})

    def f(x):
        a = x * 2
        t = a.sum().item()
        return a + t

    cf = dynoc.compile(f)
    with torch.no_grad():
        for _ in range(5):
            x = torch.randn(5)
            torch.testing.assert_close(cf(x), f(x))
    assert "calls run eagerly: a value made at the break changed (L['___stack0'] ==" \
        in capsys.readouterr().err


def test_what_the_breaking_call_raises_reaches_the_caller():
    calls = []

    @dynoc.disable
    def check(t):
        calls.append(1)
        if len(calls) == 3:
            raise ValueError("third call")

    def f(x):
        y = x.exp()
        check(y)
        return y + 1

    cf = dynoc.compile(f)
    with torch.no_grad():
        cf(torch.ones(2))
        cf(torch.ones(2))
        with pytest.raises(ValueError, match="third call"):
            cf(torch.ones(2))
        torch.testing.assert_close(cf(torch.zeros(2)), torch.full((2,), 2.0))


def test_a_try_block_after_the_break_still_catches():
    def f(x):
        y = x * 2
        dynoc.graph_break()
        try:
            raise KeyError("k")
        except KeyError:
            y = y + 10
        return y

    cf = dynoc.compile(f)
    with torch.no_grad():
        for _ in range(3):
            torch.testing.assert_close(cf(torch.ones(2)), torch.full((2,), 12.0))
    assert compiled_calls(cf) == 3


def test_a_branch_on_a_tensor_resumes_on_the_side_it_takes():
    """`if y.sum() > 0:` breaks; the built graph computes the condition, its
    truth is read natively, and each side is a resume function of its own."""

    def branch(x):
        y = x * 2
        if y.sum() > 0:
            z = y + 1
        else:
            z = y - 1
        return z * 3

    cf = dynoc.compile(branch)
    with torch.no_grad():
        for sign in (1, 1, -1, 1, -1, -1, 1):
            x = torch.rand(4) * sign
            torch.testing.assert_close(cf(x), branch(x))
    (compiled,) = cf.compiled
    assert sorted(compiled.resumes) != [] and len(compiled.resumes) == 2
    # Call 1 captures; the graph before the branch runs built from call 2 on
    # (6 calls), each side's resume function from its second visit on.
    assert compiled_calls(cf) == 6 + 2 + 2


@pytest.mark.parametrize("body, why", [
    ("loop", "the break is inside a loop"),
    ("try", "the break is inside a try or with block"),
    ("not", "it is not at a call or a branch on a tensor in the region function itself"),
])
def test_breaks_that_cannot_be_resumed_run_eagerly_and_say_why(monkeypatch, capsys, body, why):
    monkeypatch.setattr(_logs, "_enabled", {"graph_breaks"})

    def loop(x):
        for _ in range(2):
            x = x + 1
            dynoc.graph_break()
        return x

    def in_try(x):
        try:
            dynoc.graph_break()
            x = x + 2
        except ValueError:
            pass
        return x

    def negate(x):
        x = x + 2
        flag = not (x.sum() > 0)  # UNARY_NOT on a tensor: no jump to resume at
        return x + flag

    fn = {"loop": loop, "try": in_try, "not": negate}[body]
    cf = dynoc.compile(fn)
    with torch.no_grad():
        for _ in range(2):
            torch.testing.assert_close(cf(torch.ones(2)), torch.full((2,), 3.0))
    assert compiled_calls(cf) == 0
    assert f"it cannot be resumed after: {why}" in capsys.readouterr().err


def test_counts_are_the_first_calls(tmp_path):
    """The resume functions' captures are not the program's graphs or breaks
    (Dynamo counts those of the first call)."""
    program = tmp_path / "prog.py"
    program.write_text(
        "import torch, dynoc\n"
        "def f(x):\n"
        "    y = x.sin()\n"
        "    print('between')\n"
        "    return y.cos()\n"
        "cf = dynoc.compile(f)\n"
        "with torch.no_grad():\n"
        "    for _ in range(4):\n"
        "        cf(torch.ones(3))\n")
    stats = tmp_path / "stats.json"
    env = dict(os.environ, DYNOC_STATS=str(stats),
               PYTHONPATH=os.pathsep.join([os.path.join(ROOT, "lib", "capture", "python"),
                                           os.path.join(ROOT, "bazel-bin", "lib", "capture"),
                                           os.path.join(ROOT, "bazel-bin", "lib", "runtime",
                                                        "python")]))
    p = subprocess.run([sys.executable, str(program)], env=env, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert p.stdout == "between\n" * 4
    counts = json.loads(stats.read_text())
    assert (counts["graphs"], counts["breaks"], counts["recompiles"]) == (2, 1, 0)
    assert counts["compiled_calls"] == 3 + 2  # calls 2-4, and the resume's 3-4
