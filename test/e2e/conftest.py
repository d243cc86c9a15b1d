import os
import subprocess
import sys

import pytest


def pytest_configure(config):
    # tools/test.sh (what CI runs) deselects these; `tools/test.sh --slow`
    # runs only them. A plain `pytest test/e2e` runs everything.
    config.addinivalue_line(
        "markers", "slow: a long test of a path a faster CI test also covers "
                   "(tools/test.sh --slow runs them)")

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DYNOC = os.path.join(ROOT, "bazel-bin", "tools", "dynoc", "dynoc")
RUN_MODEL = os.path.join(ROOT, "bazel-bin", "examples", "run_model", "run_model")


def package_env(**extra):
    """os.environ with this checkout's dynoc package and extensions on
    PYTHONPATH and DYNOC_TORCH_COMPILE unset, for a program run in a process
    of its own."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [os.path.join(ROOT, "lib", "capture", "python"),
         os.path.join(ROOT, "bazel-bin", "lib", "capture"),
         os.path.join(ROOT, "bazel-bin", "lib", "runtime", "python"),
         os.environ.get("PYTHONPATH", "")]), **extra)
    env.pop("DYNOC_TORCH_COMPILE", None)
    return env


def run(*args, cwd=None, check=False):
    p = subprocess.run([str(a) for a in args], capture_output=True, text=True, cwd=cwd)
    if check and p.returncode != 0:
        raise AssertionError(f"{args} failed ({p.returncode}):\n{p.stdout}\n{p.stderr}")
    return p


@pytest.fixture
def dynoc():
    if not os.path.exists(DYNOC):
        pytest.fail(f"{DYNOC} is not built; run `bazel build //...` first")
    return lambda *a, **kw: run(DYNOC, *a, **kw)


@pytest.fixture(scope="module")
def dyn_mlp(tmp_path_factory):
    """test/models/dyn_mlp.mlir built: relu(x @ W^T + b) + y, x [?, 16], y [?, 8]."""
    out = tmp_path_factory.mktemp("models") / "dyn_mlp.so"
    run(DYNOC, "build", os.path.join(ROOT, "test", "models", "dyn_mlp.mlir"), "-o", out,
        check=True)
    return out


@pytest.fixture
def python():
    return lambda *a, **kw: run(sys.executable, *a, **kw)
