"""Capture on CPython 3.11, 3.12 and 3.13: one capture extension per version,
each refusing to load into another; an unsupported version gets one line
naming the supported ones. (The corpus under each version: DYNOC_PYTHON=3.12
tools/test.sh; CI runs its opcode cover.)"""
import os
import subprocess
import sys

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
EXT_DIR = os.path.join(ROOT, "bazel-bin", "lib", "capture")
PKG = os.path.join(ROOT, "lib", "capture", "python")
DYNOC = os.path.join(ROOT, "bazel-bin", "tools", "dynoc", "dynoc")
sys.path.insert(0, PKG)
from dynoc._version import SUPPORTED_PYTHONS, unsupported_python_message  # noqa: E402


def python(version):
    """This machine's environment for `version` (tools/bootstrap.sh), or skip."""
    path = sys.executable if version == "3.11" else os.path.join(ROOT, f".venv-{version}", "bin", "python")
    if not os.path.exists(path):
        pytest.skip(f"no CPython {version} environment here (DYNOC_PYTHON={version} tools/bootstrap.sh)")
    return path


def run(py, code, **env):
    e = dict(os.environ, PYTHONPATH=os.pathsep.join([PKG, EXT_DIR]), **env)
    return subprocess.run([py, "-c", code], capture_output=True, text=True, env=e, timeout=300)


def test_message_names_the_supported_versions():
    assert unsupported_python_message((3, 11, 7), "/x/python") is None
    assert unsupported_python_message((3, 13, 0), "/x/python") is None
    msg = unsupported_python_message((3, 10, 13), "/usr/bin/python3.10")
    assert msg == ("CPython 3.10.13 at /usr/bin/python3.10 cannot capture: dynoc's "
                   "evaluator runs CPython 3.11, 3.12, 3.13")
    assert [v for v in SUPPORTED_PYTHONS] == [(3, 11), (3, 12), (3, 13)]


@pytest.mark.parametrize("version", ["3.11", "3.12", "3.13"])
def test_each_version_imports_its_own_extension(version):
    r = run(python(version), "import sys, _dynoc_C; print(_dynoc_C.__file__)")
    assert r.returncode == 0, r.stderr
    name = os.path.basename(r.stdout.strip())
    tag = version.replace(".", "")
    assert name == ("_dynoc_C.so" if version == "3.11" else f"_dynoc_C.cpython-{tag}-x86_64-linux-gnu.so")


@pytest.mark.parametrize("version", ["3.11", "3.12", "3.13"])
def test_runtime_binding_is_one_build_for_every_version(version):
    """dynoc.load's extension is built once against the stable ABI."""
    rt = os.path.join(ROOT, "bazel-bin", "lib", "runtime", "python")
    r = subprocess.run([python(version), "-c", "import _dynrt; print(_dynrt.__file__)"],
                       capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=rt))
    assert r.returncode == 0, r.stderr
    assert os.path.basename(r.stdout.strip()) == "_dynrt.abi3.so"


@pytest.mark.parametrize("version", ["3.12", "3.13"])
def test_another_versions_build_refuses_to_load(version):
    # 3.11's build has the plain name another Python would also accept.
    code = ("import importlib.util as u\n"
            f"s = u.spec_from_file_location('_dynoc_C', {os.path.join(EXT_DIR, '_dynoc_C.so')!r})\n"
            "try:\n    u.module_from_spec(s)\nexcept ImportError as e:\n    print(e)\n")
    r = run(python(version), code)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == (f"_dynoc_C was built for CPython 3.11, not for this {version}: "
                                "build //lib/capture:extensions with this version's headers")


@pytest.mark.parametrize("version", ["3.12", "3.13"])
def test_capture_on_other_versions(version, tmp_path):
    """A region with the opcodes that differ from 3.11's (slices, super(),
    f-string formats, inlined comprehensions, keyword calls, a print break)
    gives the graphs and result it gives on 3.11."""
    script = tmp_path / "prog.py"
    script.write_text(
        "import torch\n"
        "class Base(torch.nn.Module):\n"
        "    def forward(self, x):\n"
        "        return x * 2\n"
        "class M(Base):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.fc = torch.nn.Linear(4, 4)\n"
        "    def forward(self, x, scale=1.0):\n"
        "        parts = [p.sum() for p in x[1:3].unbind(0)]\n"
        "        tag = f'{len(parts)!r:>3}'\n"
        "        y = super().forward(self.fc(x))\n"
        "        if tag.strip() == '2':\n"
        "            y = y + parts[0]\n"
        "        print('mid')\n"
        "        return torch.relu(y) * scale\n"
        "m = M()\n"
        "torch.manual_seed(0)\n"
        "x = torch.randn(4, 4)\n"
        "cm = torch.compile(m)\n"
        "print(torch.allclose(cm(x, scale=2.0), m(x, scale=2.0)))\n")
    out = {}
    for v in ("3.11", version):
        d = tmp_path / f"out{v}"
        r = subprocess.run([DYNOC, "capture", "-o", str(d), str(script)], capture_output=True,
                           text=True, env=dict(os.environ, DYNOC_PYTHON=python(v),
                                               PYTHONPATH=os.pathsep.join([PKG, EXT_DIR])),
                           timeout=600)
        assert r.returncode == 0, r.stderr
        assert r.stdout == "mid\nmid\nTrue\n" or r.stdout.endswith("True\n"), r.stdout
        import json
        m = json.load(open(d / "manifest.json"))
        out[v] = ([sorted(g["ops"]) for g in m["graphs"]], [b["reason"] for b in m["breaks"]],
                  [sorted(g["guards"]) for g in m["graphs"]])
    assert out[version] == out["3.11"]
    assert any("print" in b for b in out[version][1])
