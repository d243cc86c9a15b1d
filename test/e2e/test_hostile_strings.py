"""No string from a graph file reaches a shell or the generated code
unescaped: a location, an input name, an entry and a guard text holding
quotes, backslashes, newlines and `");system("touch PWNED");//` build into a
model whose manifest carries them verbatim (docs/runtime.md, "Security")."""
import os
import shutil

import pytest
import torch

from conftest import DYNOC, run

PAYLOAD = '");system("touch PWNED");//'
GRAPH = r'''#loc = loc("evil\22);system(\22touch PWNED\22);//\0Aend.py":3:4)
func.func @g(%x: tensor<2x3xf32>) -> tensor<2x3xf32> attributes {dynoc.inputs = [{kind = "user", name = "L['x\");system(\"touch PWNED\");//\n*/']"}], dynoc.entry = "a\"b\nc\\", dynoc.guards = [{kind = "tensor_match", text = "check_tensor(\");system(\"touch PWNED\");//\n", input = 0 : i64, dtype = f32, sizes = array<i64: 2, 3>, strides = array<i64: 3, 1>}]} {
  %0 = "aten.relu"(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32> loc(#loc)
  return %0 : tensor<2x3xf32>
}
'''


@pytest.mark.parametrize("target", ["cpu", "cuda"])
def test_hostile_strings_are_carried_verbatim_and_never_run(tmp_path, target):
    if target == "cuda" and not (shutil.which("nvcc") or os.path.exists("/usr/local/cuda/bin/nvcc")):
        pytest.skip("no nvcc here: the CUDA build is tested where it is installed")
    (tmp_path / "g.mlir").write_text(GRAPH)
    p = run(DYNOC, "build", "g.mlir", "-o", "g.so", f"--target={target}", cwd=tmp_path)
    assert p.returncode == 0, p.stderr[-3000:]
    for path, _, files in os.walk(tmp_path):
        assert "PWNED" not in files, path
    assert not os.path.exists("PWNED")
    if target == "cuda":  # loads only on a GPU: its manifest, from the file
        return
    import dynoc
    m = dynoc.load(tmp_path / "g.so")
    g = m.manifest["graphs"][0]
    assert g["inputs"][0]["name"] == "L['x" + PAYLOAD + "\n*/']"
    assert g["entry"] == 'a"b\nc\\'
    assert g["guards"][0]["text"] == "check_tensor(" + PAYLOAD + "\n"
    assert g["kernels"][0]["loc"] == 'evil' + PAYLOAD + "\nend.py:3:4"
    x = torch.randn(2, 3)
    torch.testing.assert_close(m(x), torch.relu(x))
    with pytest.raises(dynoc.GuardError) as e:
        m(torch.randn(3, 3))
    assert PAYLOAD in str(e.value)


# The manifest is printed in a raw string literal: a string holding its
# delimiter would end the literal and make the rest of it code that runs when
# the model loads (a constructor). It is escaped as JSON allows.
BREAKOUT = (')DYNOC_MANIFEST";\n__attribute__((constructor)) static void pwn() '
            '{ __builtin_trap(); }\nstatic const char *rest = R"DYNOC_MANIFEST(')
ENTRY_GRAPH = '''func.func @g(%x: tensor<2x3xf32>) -> tensor<2x3xf32> attributes {dynoc.inputs = [{kind = "user", name = "x"}], dynoc.entry = ENTRY} {
  %0 = "aten.relu"(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
'''


def test_a_string_holding_the_manifest_delimiter_stays_a_string(tmp_path):
    entry = '"' + BREAKOUT.replace('\\', '\\\\').replace('"', '\\"').replace('\n', '\\0A') + '"'
    (tmp_path / "g.mlir").write_text(ENTRY_GRAPH.replace("ENTRY", entry))
    p = run(DYNOC, "build", "g.mlir", "-o", "g.so", cwd=tmp_path)
    assert p.returncode == 0, p.stderr[-3000:]
    import dynoc
    m = dynoc.load(tmp_path / "g.so")  # the constructor would trap here
    assert m.manifest["graphs"][0]["entry"] == BREAKOUT
    x = torch.randn(2, 3)
    torch.testing.assert_close(m(x), torch.relu(x))
