"""libdynrt outside this tree: tools/install.sh lays out headers, the library,
pkg-config and CMake files; a CMake project and a pkg-config build use them."""
import json
import os
import re
import shutil
import subprocess
import sys

import pytest
import torch
from safetensors.torch import load_file

from conftest import ROOT, run

MODELS = os.path.join(ROOT, "test", "models")
DYNOC = os.path.join(ROOT, "bazel-bin", "tools", "dynoc", "dynoc")
CMAKE = shutil.which("cmake", path=os.path.dirname(sys.executable)) or shutil.which("cmake")


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    prefix = tmp_path_factory.mktemp("prefix")
    p = run(os.path.join(ROOT, "tools", "install.sh"), prefix)
    assert p.returncode == 0, p.stderr
    return prefix


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    out = tmp_path_factory.mktemp("model") / "dyn_mlp.so"
    run(DYNOC, "build", os.path.join(MODELS, "dyn_mlp.mlir"), "-o", out, check=True)
    return out


def expected_sum(rows):
    w = load_file(os.path.join(MODELS, "dyn_mlp.safetensors"))
    x, y = torch.full((rows, 16), 0.5), torch.full((rows, 8), 0.5)
    return float((torch.relu(x @ w["fc.weight"].T + w["fc.bias"]) + y).sum())


def test_install_lays_out_headers_library_and_package_files(installed):
    for rel in ("include/dynrt/dynrt.h", "include/dynrt/dynrt.hpp", "include/dlpack/dlpack.h",
                "lib/libdynrt.so", "lib/pkgconfig/dynrt.pc", "lib/cmake/dynrt/dynrtConfig.cmake",
                "lib/cmake/dynrt/dynrtConfigVersion.cmake", "bin/dynrt-bench"):
        assert (installed / rel).is_file(), rel
    import dynoc
    assert f"Version: {dynoc.__version__}" in (installed / "lib/pkgconfig/dynrt.pc").read_text()
    assert "SONAME" in run("readelf", "-d", installed / "lib/libdynrt.so").stdout


def test_the_gloo_plugin_is_found_beside_the_installed_libdynrt(installed, tmp_path):
    """libdynrt_gloo.so is installed beside libdynrt.so, where
    dynrt_gloo_communicator_create looks without DYNRT_GLOO_PLUGIN: a
    one-rank communicator made through the installed library alone."""
    assert (installed / "lib/libdynrt_gloo.so").is_file()
    env = {k: v for k, v in os.environ.items() if k != "DYNRT_GLOO_PLUGIN"}
    code = (
        "import ctypes, sys\n"
        "lib = ctypes.CDLL(sys.argv[1])\n"
        "lib.dynrt_gloo_communicator_create.restype = ctypes.c_void_p\n"
        "lib.dynrt_status_message.restype = ctypes.c_char_p\n"
        "out = ctypes.c_void_p()\n"
        "s = lib.dynrt_gloo_communicator_create(sys.argv[2].encode(), 1, 0, b'0', None, "
        "5000, ctypes.byref(out))\n"
        "print(lib.dynrt_status_message(ctypes.c_void_p(s)).decode() if s else 'made', "
        "bool(out.value))\n"
        "lib.dynrt_gloo_communicator_free(out)\n")
    p = subprocess.run([sys.executable, "-c", code, str(installed / "lib/libdynrt.so"),
                        str(tmp_path)], capture_output=True, text=True, env=env)
    assert p.returncode == 0, p.stderr
    assert p.stdout.split() == ["made", "True"], p.stdout


@pytest.mark.skipif(CMAKE is None, reason="cmake is not installed (requirements.txt has it)")
def test_cmake_consumer_builds_against_the_installed_tree_and_runs_a_model(installed, model,
                                                                            tmp_path):
    build = tmp_path / "build"
    src = os.path.join(ROOT, "examples", "cmake_consumer")
    p = run(CMAKE, "-S", src, "-B", build, f"-DCMAKE_PREFIX_PATH={installed}")
    assert p.returncode == 0, p.stdout + p.stderr
    p = run(CMAKE, "--build", build)
    assert p.returncode == 0, p.stdout + p.stderr
    p = run(build / "consumer", model, "5x16", "5x8", cwd=str(tmp_path))
    assert p.returncode == 0, p.stderr
    m = re.fullmatch(r"output 0: shape 5x8 sum (\S+)\n", p.stdout)
    assert m, p.stdout
    assert abs(float(m.group(1)) - expected_sum(5)) < 1e-3
    # A guard failure is the runtime's one-line message and exit 1.
    bad = run(build / "consumer", model, "5x12", "5x8")
    assert bad.returncode == 1 and "guard failed" in bad.stderr, bad.stderr
    # A newer version than the installed one is refused by find_package.
    newer = tmp_path / "newer"
    newer.mkdir()
    (newer / "CMakeLists.txt").write_text("cmake_minimum_required(VERSION 3.16)\n"
                                          "project(p NONE)\nfind_package(dynrt 9.0 REQUIRED)\n")
    p = run(CMAKE, "-S", newer, "-B", newer / "b", f"-DCMAKE_PREFIX_PATH={installed}")
    assert p.returncode != 0 and "dynrt" in p.stderr and "9.0" in p.stderr, p.stderr


def test_pkg_config_build_links_the_installed_library(installed, model, tmp_path):
    env = dict(os.environ, PKG_CONFIG_PATH=str(installed / "lib" / "pkgconfig"))
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", "dynrt"], capture_output=True,
                           text=True, env=env)
    assert flags.returncode == 0, flags.stderr
    exe = tmp_path / "consumer"
    p = run("cc", os.path.join(ROOT, "examples", "cmake_consumer", "main.c"), "-o", exe,
            *flags.stdout.split(), f"-Wl,-rpath,{installed / 'lib'}")
    assert p.returncode == 0, p.stderr
    p = run(exe, model, "2x16", "2x8")
    assert p.returncode == 0, p.stderr
    assert abs(float(p.stdout.split()[-1]) - expected_sum(2)) < 1e-3


def test_installed_dynrt_bench_times_a_model_and_needs_no_mlir(installed, model, tmp_path):
    bench = installed / "bin" / "dynrt-bench"
    libs = run("ldd", bench).stdout
    assert "MLIR" not in libs and "LLVM" not in libs and "libfmt" not in libs, libs
    p = run(bench, model, "--shape", "x=4x16", "--shape", "y=4x8", "-n", "20",
            "--json", tmp_path / "b.json")
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith(f"dynrt-bench: {model} (graph 'dyn_mlp', cpu)\n"), p.stdout
    assert json.loads((tmp_path / "b.json").read_text())["runs"] == 20
    bad = run(bench, model)
    assert bad.returncode == 1
    assert bad.stderr.strip() == ("dynrt-bench: error: input 'x' has a dynamic dim 0: "
                                  "give its shape with --shape x=...")
