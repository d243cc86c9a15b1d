"""The wheel (tools/build_wheel.sh) installed into a fresh venv with torch:
`dynoc` and `import dynoc` work without the source tree, from another
directory: capture -> build -> dynoc.load on examples/mlp.py, and dynoc.compile
in process."""
import os
import shutil
import subprocess
import sys
from collections import namedtuple
from pathlib import Path

import numpy as np
import pytest

from conftest import ROOT

PYTHON311 = shutil.which("python3.11") or sys.executable
# Where the wheel went: the Python that imports it, the console scripts' folder,
# the site folder holding dynoc/, and the environment to run them in.
Installed = namedtuple("Installed", "python scripts site env")


def sh(*args, cwd=None, env=None, timeout=900):
    p = subprocess.run([str(a) for a in args], capture_output=True, text=True, cwd=cwd,
                       env=env, timeout=timeout)
    return p


@pytest.fixture(scope="module")
def venv(tmp_path_factory):
    base = tmp_path_factory.mktemp("wheel")
    p = sh(os.path.join(ROOT, "tools", "build_wheel.sh"), "--out", base / "dist")
    assert p.returncode == 0, p.stderr[-3000:]
    wheel = p.stdout.strip().splitlines()[-1]
    assert os.path.basename(wheel).startswith("dynoc-") and wheel.endswith(".whl")
    # auditwheel grafted what the binaries need beyond manylinux and tagged it.
    assert "-manylinux_2_" in os.path.basename(wheel), wheel
    p = sh(os.path.join(ROOT, ".venv", "bin", "auditwheel"), "show", wheel)
    assert p.returncode == 0 and 'is consistent with the following platform tag: "manylinux_2_' \
        in " ".join(p.stdout.split()), p.stdout + p.stderr
    # A clean environment: nothing of this checkout on the path.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "DYNOC"))}
    other = os.environ.get("DYNOC_TEST_TORCH_VENV")
    if other:
        # Another torch release (tools/test.sh --torch-versions): its cached
        # environment, the wheel installed into a fresh target beside it.
        python, site = Path(other) / "bin" / "python", base / "site"
        p = sh(python, "-m", "pip", "install", "-q", "--no-deps", "--target", site, wheel,
               env=env)
        assert p.returncode == 0, p.stderr[-3000:]
        env.update(PYTHONPATH=str(site), PATH=f"{site / 'bin'}:{env['PATH']}")
        return Installed(python, site / "bin", str(site), env)
    env_dir = base / "venv"
    p = sh(PYTHON311, "-m", "venv", env_dir)
    assert p.returncode == 0, p.stderr
    p = sh(env_dir / "bin" / "pip", "install", "-q", "torch==2.13.0", wheel, env=env)
    assert p.returncode == 0, p.stderr[-3000:]
    python = env_dir / "bin" / "python"
    site = sh(python, "-c", "import sysconfig; print(sysconfig.get_paths()['platlib'])",
              env=env).stdout.strip()
    return Installed(python, env_dir / "bin", site, env)


def test_wheel_gives_the_cli_and_the_package_outside_the_tree(venv, tmp_path):
    python, scripts, site, env = venv
    dynoc = scripts / "dynoc"
    work = tmp_path / "elsewhere"
    work.mkdir()
    shutil.copy(os.path.join(ROOT, "examples", "mlp.py"), work)

    p = sh(dynoc, "--version", cwd=work, env=env)
    assert p.returncode == 0 and p.stdout.startswith("dynoc "), p.stderr
    # The CLI runs without Debian's LLVM/MLIR 16 (linked in) or libfmt
    # (grafted): what it loads is libc, libstdc++ and the wheel's own.
    needed = sh("ldd", os.path.join(site, "dynoc", "_bin", "dynoc")).stdout
    assert "libMLIR" not in needed and "libLLVM" not in needed and "not found" not in needed
    assert "/dynoc.libs/libfmt-" in needed, needed
    p = sh(dynoc, "doctor", cwd=work, env=env)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "ok       Python with torch" in p.stdout and site in p.stdout
    toolchain = os.path.join(site, "dynoc", "_toolchain")
    assert f"compiles and links (dnnl.h, the wheel's copy in {toolchain})" in p.stdout, p.stdout

    p = sh(dynoc, "capture", "mlp.py", "-o", "out", "--", "--save-io", "io", cwd=work, env=env)
    assert p.returncode == 0, p.stderr[-3000:]
    assert "graphs: 1" in p.stderr
    p = sh(dynoc, "build", "out/graph_0.mlir", "-o", "mlp.so", cwd=work, env=env)
    assert p.returncode == 0, p.stderr[-3000:]
    # The model links the oneDNN the wheel carries (its GEMMs).
    needed = sh("ldd", work / "mlp.so").stdout
    assert os.path.join(toolchain, "lib", "libdnnl.so.2") in needed, needed
    check = ("import dynoc, numpy as np, torch, sys\n"
             f"assert dynoc.__file__.startswith({site!r}), dynoc.__file__\n"
             "m = dynoc.load('mlp.so')\n"
             "y = m(torch.from_numpy(np.load('io/x.npy')))\n"
             "print(float((y - torch.from_numpy(np.load('io/expected.npy'))).abs().max()))\n")
    p = sh(python, "-c", check, cwd=work, env=env)
    assert p.returncode == 0, p.stderr[-3000:]
    assert float(p.stdout) < 1e-5
    for bench in (dynoc, scripts / "dynrt-bench"):
        args = ["bench"] if bench == dynoc else []
        p = sh(bench, *args, "mlp.so", "-n", "5", cwd=work, env=env)
        assert p.returncode == 0, p.stderr[-3000:]
        assert "latency ms  min " in p.stdout, p.stdout

    jit = ("import torch, dynoc\n"
           "m = torch.nn.Sequential(torch.nn.Linear(8, 4), torch.nn.ReLU()).eval()\n"
           "c = dynoc.compile(m)\n"
           "x = torch.randn(2, 8)\n"
           "with torch.no_grad():\n"
           "    c(x); y = c(x)\n"
           "print(torch.allclose(y, m(x)), dynoc.counters['compiled_calls'])\n")
    p = sh(python, "-c", jit, cwd=work, env=dict(env, DYNOC_CACHE="0"))
    assert p.returncode == 0, p.stderr[-3000:]
    assert p.stdout.split() == ["True", "1"]
