"""`dynoc build DIR`: the variants of one entry in a capture directory, one model."""
import os

import pytest
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
PROGRAMS = os.path.join(HERE, "..", "capture", "programs")


def capture(dynoc, program, out):
    dynoc("capture", "-o", out, os.path.join(PROGRAMS, program), check=True)


def test_variants_of_one_entry_become_one_model(dynoc, tmp_path):
    import dynoc as dy
    capture(dynoc, "p74_dynamic_false.py", tmp_path / "cap")  # sizes 2 and 3, static
    p = dynoc("build", tmp_path / "cap", "-o", tmp_path / "m.so", check=True)
    assert "2 variant(s) of" in p.stderr
    m = dy.load(tmp_path / "m.so")
    for b in (2, 3):  # each size runs its own variant
        x = torch.randn(b, 2)
        assert torch.equal(m(x), x.relu() + 1)
    with pytest.raises(dy.GuardError, match=r"size\(\)\[0\] == 2, got 4"):
        m(torch.ones(4, 2))


def test_variants_differing_in_python_values_are_refused(dynoc, tmp_path):
    capture(dynoc, "p39_int_arg_recompile.py", tmp_path / "cap")  # L['n'] == 2 / 5
    p = dynoc("build", tmp_path / "cap", "-o", tmp_path / "m.so")
    assert p.returncode == 1
    assert "differ in Python-value guards, which the runtime cannot check" in p.stderr
    assert not (tmp_path / "m.so").exists()


def test_split_regions_and_bad_directories(dynoc, tmp_path):
    capture(dynoc, "p51_graph_break.py", tmp_path / "cap")  # one region, two graphs
    p = dynoc("build", tmp_path / "cap", "-o", tmp_path / "m.so")
    assert p.returncode == 1 and "is a whole region" in p.stderr
    (tmp_path / "empty").mkdir()
    p = dynoc("build", tmp_path / "empty", "-o", tmp_path / "m.so")
    assert p.returncode == 1 and "has no manifest.json" in p.stderr


def test_input_mutation_is_written_back(dynoc, tmp_path):
    """`x.mul_(3)` in the region: the graph records it functionally and lists
    the write-back; dynoc.load applies it, so the caller sees eager's x."""
    import dynoc as dy
    capture(dynoc, "p29_input_mutation.py", tmp_path / "cap")
    assert "dynoc.mutations" in (tmp_path / "cap" / "graph_0.mlir").read_text()
    dynoc("build", tmp_path / "cap" / "graph_0.mlir", "-o", tmp_path / "m.so", check=True)
    m = dy.load(tmp_path / "m.so")
    assert m.manifest["graphs"][0]["mutations"] == [{"input": "L['x']", "output": 0}]
    x, ref = torch.arange(2.0), torch.arange(2.0)
    y = m(x)
    ref.mul_(3)
    assert torch.equal(x, ref) and torch.equal(y, ref + 1)


def test_several_entries_need_entry(dynoc, tmp_path):
    capture(dynoc, "p64_nested_regions.py", tmp_path / "one")  # one entry: fine
    script = tmp_path / "two.py"
    script.write_text("import torch\n"
                      "f = torch.compile(lambda x: x + 1)\n"
                      "g = torch.compile(lambda x: x * 2)\n"
                      "f(torch.ones(2)); g(torch.ones(2))\n")
    dynoc("capture", "-o", tmp_path / "cap", script, check=True)
    p = dynoc("build", tmp_path / "cap", "-o", tmp_path / "m.so")
    assert p.returncode == 1 and "has graphs of several entries; pick one with --entry" in p.stderr
    entry = p.stderr.strip().splitlines()[-1].strip().rsplit(" (", 1)[0]
    dynoc("build", tmp_path / "cap", "--entry", entry, "-o", tmp_path / "m.so", check=True)


def test_capture_entry_must_be_module_colon_function(dynoc, tmp_path):
    p = dynoc("capture", "-o", tmp_path / "out", "--entry", "nocolon",
              os.path.join(PROGRAMS, "p01_function.py"))
    assert p.returncode == 2 and "--entry 'nocolon' is not MODULE:FUNC" in p.stderr


def test_size_guards_pick_the_variant(dynoc, tmp_path):
    """p76 makes a dynamic variant guarded by `L['x'].size()[0] > 4` and, at
    batch 2, a second one (`<= 4`), dynamic from that run already: one model,
    and the runtime checks the symbolic guards itself."""
    import dynoc as dy
    capture(dynoc, "p76_size_guard.py", tmp_path / "cap")
    dynoc("build", tmp_path / "cap", "-o", tmp_path / "m.so", check=True)
    m = dy.load(tmp_path / "m.so")
    graphs = m.manifest["graphs"]
    guards = [g for graph in graphs for g in graph["guards"] if g["kind"] == "size"]
    assert {g["text"] for g in guards} == {"L['x'].size()[0] > 4", "L['x'].size()[0] <= 4"}
    assert all(graph["inputs"][0]["shape"] == [-1, 3, 4] for graph in graphs)

    def ref(x):
        y = x * 2 if x.size(0) > 4 else x + 1
        return y.view(x.size(0), -1).sum(1)

    for b in (5, 7, 33, 2, 3, 4):  # one variant for b > 4, the other for b <= 4
        x = torch.randn(b, 3, 4)
        assert torch.allclose(m(x), ref(x), atol=1e-5)
    with pytest.raises(dy.GuardError, match=r"guard failed: L\['x'\]\.size\(\)\[2\] == 4, got 5"):
        m(torch.randn(3, 3, 5))
    # The first variant alone refuses a batch its size guard excludes.
    dynoc("build", tmp_path / "cap" / "graph_0.mlir", "-o", tmp_path / "first.so", check=True)
    first = dy.load(tmp_path / "first.so")
    assert torch.allclose(first(torch.ones(6, 3, 4)), ref(torch.ones(6, 3, 4)))
    with pytest.raises(dy.GuardError,
                       match=r"L\['x'\]\.size\(\)\[0\] > 4 \(input 0 size\(\)\[0\] = 3\)"):
        first(torch.randn(3, 3, 4))


def test_convolution_variants_bundle(dynoc, tmp_path):
    """Three static conv variants (p90: sizes 9, 10, 11) in one model: each
    graph's oneDNN call sites are its own symbols (a redefinition of
    `conv_site_1` failed the C++ compile before)."""
    import dynoc as dy
    capture(dynoc, "p90_computed_size_not_affine.py", tmp_path / "cap")
    p = dynoc("build", tmp_path / "cap", "-o", tmp_path / "m.so", check=True)
    assert "3 variant(s) of" in p.stderr
    m = dy.load(tmp_path / "m.so")
    conv = torch.nn.Conv2d(1, 2, 3, stride=2)
    torch.nn.init.constant_(conv.weight, 0.1)
    torch.nn.init.zeros_(conv.bias)
    with torch.no_grad():
        for n in (9, 10, 11):
            x = torch.randn(1, 1, n, n)
            y = conv(x)
            want = y.mean() if y.size(-1) > 3 else y.sum()
            assert torch.allclose(m(x), want, atol=1e-5)


def test_graph_files_of_one_capture_bundle_as_functions(dynoc, tmp_path):
    """`dynoc build A.mlir B.mlir C.mlir`: a training capture's forward, its
    backward and the update as one model with a function per graph
    (docs/runtime.md; test/unit/FunctionsTest.cpp runs one from C++); files
    of two captures, a directory among them or a graph given twice are
    refused with the reason."""
    import dynoc as dy
    cap = tmp_path / "cap"
    capture(dynoc, "p121_batch_norm_training.py", cap)
    files = [cap / f"graph_{k}.mlir" for k in range(3)]
    p = dynoc("build", *files, "-o", tmp_path / "train.so", check=True)
    assert "3 function(s) in one model: graph_0, graph_1, graph_2" in p.stderr
    m = dy.load(tmp_path / "train.so")
    graphs = m.manifest["graphs"]
    assert [g["function"] for g in graphs] == ["graph_0", "graph_1", "graph_2"]
    assert graphs[1]["kind"] == "backward"
    other = tmp_path / "other"
    other.mkdir()
    (other / "graph_1.mlir").write_text(files[1].read_text())
    for args, why in [((files[0], other / "graph_1.mlir"), "bundled graph files share one "
                       "capture directory's weights"),
                      ((files[0], cap), "is a directory: a bundle takes graph files"),
                      ((files[0], files[0]), "graph 'graph_0' is given twice")]:
        p = dynoc("build", *args, "-o", tmp_path / "bad.so")
        assert p.returncode != 0 and why in p.stderr, p.stderr
