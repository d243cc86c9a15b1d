"""End to end: capture -> .mlir -> build -> .so -> libdynrt, and the errors a user
meets on the way."""
import json
import os
import re
import textwrap

import numpy as np

from conftest import ROOT, RUN_MODEL, run

MLP = os.path.join(ROOT, "examples", "mlp.py")


def write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(textwrap.dedent(text))
    return p


def test_mlp_capture_build_run_matches_eager(dynoc, python, tmp_path):
    out = tmp_path / "out"
    plain = python(MLP, check=True)
    cap = dynoc("capture", MLP, "-o", out, "--", "--save-io", out / "io", check=True)
    assert cap.stdout == plain.stdout  # the script's output is untouched
    m = json.loads((out / "manifest.json").read_text())
    assert m["format"] == "dynoc-capture" and m["version"] == 1
    assert len(m["graphs"]) == 1 and m["breaks"] == []
    g = m["graphs"][0]
    assert g["ops"] == {"aten.t": 2, "aten.addmm": 2, "aten.relu": 1}
    assert g["entry"].endswith("mlp.py:22:forward")
    assert g["guards"][0] == ("check_tensor(L['x'], torch.float32, device='cpu', "
                              "requires_grad=False, size=[4, 16], stride=[16, 1])")
    assert "___is_grad_enabled() == False" in g["guards"]
    assert [i["kind"] for i in g["inputs"]] == ["user"] + ["parameter"] * 4
    assert "graphs: 1" in cap.stderr and "graph breaks: 0" in cap.stderr

    so = tmp_path / "mlp.so"
    dynoc("build", out / "graph_0.mlir", "-o", so, check=True)
    assert (tmp_path / "mlp.weights.safetensors").exists()
    dynoc("run", so, "-i", out / "io" / "x.npy", "-o", tmp_path / "res", check=True)
    y = np.load(tmp_path / "res" / "output_0.npy")
    ref = np.load(out / "io" / "expected.npy")
    assert np.abs(y - ref).max() <= 1e-5 * np.abs(ref).max()

    demo = run(RUN_MODEL, so, out / "io" / "x.npy", out / "io" / "expected.npy", check=True)
    assert "MATCH" in demo.stdout

    info = json.loads(dynoc("inspect", so, check=True).stdout)
    assert info["format"] == "dynoc-model" and info["graphs"][0]["inputs"][0]["name"] == "L['x']"

    # The shared object depends on no Python, LibTorch or MLIR.
    deps = run("ldd", so).stdout
    assert "python" not in deps and "torch" not in deps and "MLIR" not in deps

    # A guard failure names the guard in the manifest's words.
    np.save(tmp_path / "bad.npy", np.zeros((5, 16), np.float32))
    bad = dynoc("run", so, "-i", tmp_path / "bad.npy", "-o", tmp_path / "res2")
    assert bad.returncode == 1
    assert bad.stderr.strip() == (
        "dynoc run: error: guard failed: L['x'].size()[0] == 4, got 5 "
        "(guard: check_tensor(L['x'], torch.float32, device='cpu', "
        "requires_grad=False, size=[4, 16], stride=[16, 1]))")


def test_inductor_backend_builds_each_graph(dynoc, tmp_path):
    out = tmp_path / "out"
    dynoc("capture", MLP, "-o", out, "--backend=inductor", check=True)
    assert (out / "graph_0.so").exists()


def test_graph_break_on_tensor_control_flow_matches_dynamo(dynoc, python, tmp_path):
    script = write(tmp_path, "brk.py", """
        import torch

        def f(x):
            y = torch.sin(x) * 2
            if y.sum() > 0:
                return torch.cos(y)
            return torch.relu(y)

        if __name__ == "__main__":
            x = torch.ones(3)
            cf = torch.compile(f, backend="eager")
            print(cf(x).tolist())
    """)
    cap = dynoc("capture", script, "-o", tmp_path / "out", check=True)
    assert cap.stdout == python(script, check=True).stdout
    m = json.loads((tmp_path / "out" / "manifest.json").read_text())
    reasons = [b["reason"] for b in m["breaks"]]
    assert reasons == ["a tensor's value decides Python control flow"]
    assert m["breaks"][0]["location"].endswith("brk.py:6")
    assert len(m["graphs"]) == 2
    # y flows across the break; graph_0 also outputs the condition it hands Python.
    assert m["graphs"][1]["inputs"][0]["name"].startswith("graph_0.output_")
    assert len(m["graphs"][0]["outputs"]) == 2
    # PyTorch's Dynamo makes the same number of graphs and breaks here.
    ref = python("-c", textwrap.dedent(f"""
        import sys, torch, torch._dynamo
        sys.path.insert(0, {str(tmp_path)!r})
        from brk import f
        e = torch._dynamo.explain(f)(torch.ones(3))
        print(e.graph_count, e.graph_break_count)
    """), check=True)
    assert ref.stdout.split() == ["2", "1"]


def test_script_that_raises_keeps_traceback_exit_code_and_graphs(dynoc, tmp_path):
    script = write(tmp_path, "boom.py", """
        import torch

        def f(x):
            return torch.relu(x) + 1

        cf = torch.compile(f)
        print(cf(torch.ones(2)).tolist())
        raise ValueError("boom")
    """)
    p = dynoc("capture", script, "-o", tmp_path / "out")
    assert p.returncode == 1
    assert p.stdout == "[2.0, 2.0]\n"
    assert "Traceback (most recent call last):" in p.stderr
    assert 'boom.py", line 9, in <module>' in p.stderr
    assert "ValueError: boom" in p.stderr
    assert (tmp_path / "out" / "graph_0.mlir").exists()


def test_script_exit_code_passes_through(dynoc, tmp_path):
    script = write(tmp_path, "ex.py", "import sys\nprint('hi')\nsys.exit(7)\n")
    p = dynoc("capture", script, "-o", tmp_path / "out")
    assert (p.returncode, p.stdout) == (7, "hi\n")


def test_syntax_error_script(dynoc, tmp_path):
    script = write(tmp_path, "bad.py", "def f(:\n  pass\n")
    p = dynoc("capture", script, "-o", tmp_path / "out")
    assert p.returncode == 1
    assert "SyntaxError" in p.stderr


def test_missing_script(dynoc, tmp_path):
    p = dynoc("capture", tmp_path / "nope.py")
    assert p.returncode == 1
    assert p.stderr.strip() == f"dynoc capture: error: script '{tmp_path / 'nope.py'}' not found"


def test_unknown_backend(dynoc, tmp_path):
    p = dynoc("capture", MLP, "--backend=tvm")
    assert p.returncode == 1
    assert "unknown backend 'tvm'" in p.stderr


def test_list_backends(dynoc):
    # As torch._dynamo.list_backends(): debug backends only with --all.
    lines = dynoc("list-backends", check=True).stdout.splitlines()
    assert any(l.startswith("inductor") for l in lines)
    assert not any(l.startswith("eager") for l in lines)
    lines = dynoc("list-backends", "--all", check=True).stdout.splitlines()
    assert any(l.startswith("eager") and "[debug]" in l for l in lines)
    assert any(l.startswith("inductor") for l in lines)


def test_version_is_one_line_and_matches_the_package(dynoc):
    import dynoc as package
    p = dynoc("--version", check=True)
    assert p.stdout.startswith(f"dynoc {package.__version__} (MLIR/LLVM 16."), p.stdout
    assert re.fullmatch(r"\d+\.\d+\.\d+", package.__version__)


def test_help_for_every_subcommand(dynoc):
    for sub in ["capture", "build", "list-backends", "opt", "inspect", "run"]:
        p = dynoc(sub, "--help", check=True)
        assert sub in p.stdout and "Options" in p.stdout or "OPTIONS" in p.stdout


def test_bad_model_files(dynoc, tmp_path):
    garbage = tmp_path / "garbage.so"
    garbage.write_bytes(b"\x7fELF" + b"\0" * 10)
    p = dynoc("inspect", garbage)
    assert p.returncode == 1 and p.stderr.startswith(f"dynoc inspect: error: cannot load model '{garbage}'")
    p = dynoc("inspect", "/lib/x86_64-linux-gnu/libm.so.6")
    assert p.returncode == 1 and "is not a dynoc model" in p.stderr
    p = dynoc("run", tmp_path / "missing.so", "-o", tmp_path / "r")
    assert p.returncode == 1 and "does not exist" in p.stderr


def test_corrupted_weights_and_wrong_input_count(dynoc, tmp_path):
    out = tmp_path / "out"
    dynoc("capture", MLP, "-o", out, "--", "--save-io", out / "io", check=True)
    so = tmp_path / "m.so"
    dynoc("build", out / "graph_0.mlir", "-o", so, check=True)
    p = dynoc("run", so, "-o", tmp_path / "r")
    assert p.returncode == 1 and "model takes 1 inputs, got 0" in p.stderr
    w = tmp_path / "m.weights.safetensors"
    w.write_bytes(w.read_bytes()[:-100])
    p = dynoc("run", so, "-i", out / "io" / "x.npy", "-o", tmp_path / "r")
    assert p.returncode == 1
    assert "is corrupted" in p.stderr and "lies outside the file" in p.stderr


def test_value_guards_loops_and_recompiles(dynoc, python, tmp_path):
    script = write(tmp_path, "guards.py", """
        import torch

        class Block(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.layers = torch.nn.ModuleList([torch.nn.Linear(4, 4) for _ in range(2)])
                self.use_relu = True

            def forward(self, x, scale):
                for layer in self.layers:
                    x = layer(x)
                if self.use_relu:
                    x = torch.relu(x)
                return x * scale

        torch.manual_seed(0)
        m = torch.compile(Block())
        print(m(torch.ones(2, 4), 2.0).sum().item() != 0)
        print(m(torch.ones(2, 4), 2.0).shape)       # same guards: no new graph
        print(m(torch.ones(2, 4), 3.0).shape)       # a scalar is specialized: recompile
        print(m(torch.ones(5, 4), 3.0).shape)       # new size: recompile, dim 0 dynamic
    """)
    cap = dynoc("capture", script, "-o", tmp_path / "out", check=True)
    assert cap.stdout == python(script, check=True).stdout
    m = json.loads((tmp_path / "out" / "manifest.json").read_text())
    # The size change made the scale=3.0 variant dynamic instead of a third graph.
    assert len(m["graphs"]) == 2
    assert [r["guard"] for r in m["recompiles"]][0] == "L['scale'] == 2.0"
    assert m["recompiles"][1]["guard"].startswith("check_tensor(L['x'], torch.float32")
    assert m["recompiles"][1]["dynamic"] == {"L['x']": [0]}
    assert m["graphs"][1]["inputs"][0]["shape"] == [None, 4]
    g = m["graphs"][0]
    assert "L['self'].use_relu == True" in g["guards"]
    assert g["ops"]["aten.addmm"] == 2 and g["ops"]["aten.relu"] == 1
    names = [i["name"] for i in g["inputs"]]
    assert names[0] == "L['x']" and "layers.0.weight" in names and "layers.1.bias" in names


def test_fstrings_in_followed_code_are_evaluated(dynoc, python, tmp_path):
    # BatchNorm's input check formats its message with an f-string; the
    # evaluator runs FORMAT_VALUE/BUILD_STRING itself, so no frame is skipped.
    script = write(tmp_path, "fstr.py", """
        import torch

        def label(x, scale):
            return f"{x.dim()}d:{scale!r:>6}|{'ok'}"

        def f(x):
            tag = label(x, 2.5)
            return torch.relu(x) * len(tag)

        if __name__ == "__main__":
            print(torch.compile(f, backend="eager")(torch.ones(2, 3)).tolist())
            bn = torch.nn.BatchNorm2d(3).eval()
            with torch.no_grad():
                print(torch.compile(bn)(torch.ones(1, 3, 2, 2)).shape)
    """)
    cap = dynoc("capture", script, "-o", tmp_path / "out", check=True)
    assert cap.stdout == python(script, check=True).stdout
    m = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert m["breaks"] == []
    assert len(m["graphs"]) == 2


BRK = """
    import sys
    import torch

    def f(x):
        y = torch.sin(x) * 2
        if y.sum() > 0:
            return torch.cos(y)
        return y

    cf = torch.compile(f)
    print(cf(torch.ones(3)).tolist())
    print(cf(torch.ones(4)).tolist())
    sys.exit(int(sys.argv[1]) if len(sys.argv) > 1 else 0)
"""


def test_explain_prints_only_the_report(dynoc, tmp_path):
    script = write(tmp_path, "brk.py", BRK)
    p = dynoc("explain", script)
    assert p.returncode == 0
    lines = p.stdout.splitlines()
    assert lines[0] == "dynoc capture report"
    assert "  graphs: 4" in lines and "  graph breaks: 2" in lines and "  recompiles: 1" in lines
    assert "-0.11" not in p.stdout  # the script's own output is silenced
    assert p.stderr == ""
    # The script's exit code passes through.
    assert dynoc("explain", script, "--", "3").returncode == 3


def test_dynoc_logs_prints_events_as_they_happen(dynoc, tmp_path):
    import subprocess
    from conftest import DYNOC
    script = write(tmp_path, "brk.py", BRK)
    env = dict(os.environ, DYNOC_LOGS="graph_breaks,recompiles,guards,graph_code,nonsense")
    p = subprocess.run([DYNOC, "capture", script, "-o", tmp_path / "out"], env=env,
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    err = p.stderr.splitlines()
    assert err[0] == ("[dynoc] DYNOC_LOGS: unknown log(s) nonsense (known: graph_breaks, "
                      "guards, recompiles, graph_code, all)")
    assert f"[dynoc:graph_breaks] graph break at {script}:7: a tensor's value decides " \
           "Python control flow" in err
    assert any(l.startswith("[dynoc:recompiles] recompiling ") and
               "guard failed: check_tensor(L['x'], torch.float32" in l for l in err)
    assert "[dynoc:guards]   ___is_grad_enabled() == True" in err
    assert any(l.startswith("[dynoc:graph_code]   func.func @graph_0(") for l in err)
    # The script's stdout is untouched.
    assert p.stdout.splitlines()[0].startswith("[-0.11")


def test_explain_api_matches_dynamo(python):
    # dynoc.explain works in a plain Python process, like torch._dynamo.explain.
    p = python("-c", textwrap.dedent("""
        import torch, torch._dynamo, dynoc

        def f(x):
            y = torch.sin(x) * 2
            if y.sum() > 0:
                return torch.cos(y)
            return torch.relu(y)

        e = dynoc.explain(f)(torch.ones(3))
        d = torch._dynamo.explain(f)(torch.ones(3))
        print(e.graph_count, e.graph_break_count, d.graph_count, d.graph_break_count)
        print(e.break_reasons[0]["reason"])
        print(sorted(e.ops_per_graph[1]))
        print(str(e).splitlines()[0])
    """), check=True)
    lines = p.stdout.splitlines()
    assert lines[0] == "2 1 2 1"
    assert lines[1] == "a tensor's value decides Python control flow"
    assert lines[2] == "['aten.cos']"
    assert lines[3] == "dynoc capture report"


def test_explain_lists_every_op_the_target_cannot_build_yet(dynoc, tmp_path):
    script = write(tmp_path, "cov.py", """\
        import torch

        @torch.compile
        def f(x):
            return torch.cummax(x, 0)[0] * 2 + torch.cumprod(x, 0)

        @torch.compile
        def g(x):
            return torch.relu(x)

        print(f(torch.ones(3)).sum().item(), g(torch.ones(2)).sum().item())
        """)
    p = dynoc("explain", script, "--target=cpu")
    assert p.returncode == 0, p.stderr
    assert "cannot build for --target=cpu yet (1 graph(s)):" in p.stdout, p.stdout
    for op, line in (("cummax", 3), ("cumprod", 5)):
        assert re.search(rf"graph_0\.mlir:{line}:\d+: error: dynoc build \(cpu\): op "
                         rf"'aten\.{op}' is not supported by the CPU backend yet "
                         rf"\(.*cov\.py:3:f\)", p.stdout), p.stdout
    assert "graph_1" not in p.stdout.split("cannot build")[1]
    assert "[dynoc build]" not in p.stderr  # the check prints no build progress
