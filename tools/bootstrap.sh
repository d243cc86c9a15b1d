#!/usr/bin/env bash
# Installs what dynoc needs on a fresh Debian bookworm machine. Idempotent: when
# everything is present it only checks and returns in seconds.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
say() { echo "[bootstrap] $*" >&2; }

debs=(libmlir-16-dev mlir-16-tools llvm-16-dev llvm-16-tools bazel-bootstrap
      libcli11-dev libfmt-dev catch2 nlohmann-json3-dev libdnnl-dev libsleef-dev
      libdlpack-dev libomp-16-dev clang-format-16 pybind11-dev
      libgloo-dev  # gloo: libdynrt's CPU communicator plugin (libdynrt_gloo.so)
      clang-16 libclang-rt-16-dev)  # clang: the fuzz targets (tools/fuzz.sh)
missing=()
for p in "${debs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  say "installing Debian packages: ${missing[*]}"
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
else
  say "Debian packages: all present"
fi

# make_venv DIR PYTHON: a virtual environment with requirements.txt and
# `import dynoc` (the package sources and the extensions that `bazel build
# //...` puts under bazel-bin).
make_venv() {
  local venv="$1" python="$2"
  if [ ! -x "$venv/bin/python" ]; then
    say "creating Python environment $venv ($("$python" --version 2>&1))"
    "$python" -m venv "$venv"
  fi
  local req="$root/requirements.txt" stamp="$venv/.requirements.sha256"
  local want
  want="$(sha256sum "$req" | cut -d' ' -f1)"
  if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
    say "installing Python packages from requirements.txt into $venv"
    "$venv/bin/python" -m pip install -q --upgrade pip >&2
    "$venv/bin/python" -m pip install -q -r "$req" >&2
    echo "$want" > "$stamp"
  else
    say "Python packages in $venv: up to date"
  fi
  local site
  site="$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
  # DYNOC_TORCH_COMPILE=1: torch.compile routes to dynoc in any process of it.
  printf '%s\n' "$root/python" "$root/bazel-bin/lib/capture" \
    "$root/bazel-bin/lib/runtime/python" \
    "import os; os.environ.get('DYNOC_TORCH_COMPILE') == '1' and __import__('dynoc').install()" \
    > "$site/dynoc.pth"
}

# find_python X.Y: pyenv's CPython X.Y, else pythonX.Y on PATH.
find_python() {
  local v="$1" p
  for p in $(ls -d "$HOME/.pyenv/versions/$v".* 2>/dev/null | sort -rV); do
    [ -x "$p/bin/python$v" ] && { echo "$p/bin/python$v"; return; }
  done
  command -v "python$v" || true
}

# The build's environment: CPython 3.11, always (`.venv`).
make_venv "$root/.venv" "$(find_python 3.11 | grep . || command -v python3)"

# DYNOC_PYTHON=3.12 or 3.13 (tools/test.sh --all-pythons sets each): an
# environment of that version too, which capture then runs in. torch for it
# comes from PyPI, a CUDA build (several GB): it is made once per machine
# under the cache, outside the checkout, and `.venv-3.12` links to it.
case "${DYNOC_PYTHON:-}" in
  ""|3.11|/*) ;;
  3.12|3.13)
    py="$(find_python "$DYNOC_PYTHON")"
    if [ -z "$py" ]; then
      say "error: DYNOC_PYTHON=$DYNOC_PYTHON: no CPython $DYNOC_PYTHON here (pyenv or python$DYNOC_PYTHON on PATH)"
      exit 2
    fi
    shared="${XDG_CACHE_HOME:-$HOME/.cache}/dynoc/venv-$DYNOC_PYTHON"
    mkdir -p "$(dirname "$shared")"
    make_venv "$shared" "$py"
    [ -L "$root/.venv-$DYNOC_PYTHON" ] || [ ! -e "$root/.venv-$DYNOC_PYTHON" ] ||
      { say "error: $root/.venv-$DYNOC_PYTHON exists and is not a link to $shared"; exit 2; }
    ln -sfn "$shared" "$root/.venv-$DYNOC_PYTHON" ;;
  *)
    say "error: DYNOC_PYTHON=$DYNOC_PYTHON: capture runs CPython 3.11, 3.12 and 3.13 (or give a Python's path)"
    exit 2 ;;
esac

# The CUDA target's libraries (dynoc build --target=cuda; no GPU needed):
# nvcc and the CUDA runtime come with the machine (/usr/local/cuda); cuBLASLt's
# headers and library from the PyPI wheel, at the cuBLAS release the GPU
# machine's CUDA 13.0 stack has. Installed once per machine under the cache,
# outside the checkout (about 570 MB), where dynoc looks for it.
cublas_version=13.1.2.11
cache="${XDG_CACHE_HOME:-$HOME/.cache}/dynoc"
cublas="$cache/nvidia-cublas-$cublas_version"
if [ ! -f "$cublas/nvidia/cu13/include/cublasLt.h" ]; then
  say "installing cuBLAS $cublas_version (PyPI nvidia-cublas) into $cublas"
  rm -rf "$cublas.tmp"
  "$root/.venv/bin/python" -m pip install -q --no-deps --target "$cublas.tmp" \
    "nvidia-cublas==$cublas_version" >&2
  mv "$cublas.tmp" "$cublas"
else
  say "cuBLAS $cublas_version: present"
fi
# Files of a PyPI wheel, extracted into a folder of the cache:
#   wheel_files DEST "PACKAGE==VERSION" WHAT PREFIX...
# keeps the wheel's members under each PREFIX (a path ending in / is a folder);
# written under DEST.tmp and renamed, so a killed bootstrap leaves no half.
wheel_files() {
  local dest="$1" requirement="$2" what="$3"
  shift 3
  say "installing $what ($requirement from PyPI) into $dest"
  rm -rf "$dest.tmp" && mkdir -p "$dest.tmp"
  "$root/.venv/bin/python" -m pip download -q --no-deps -d "$dest.tmp" "$requirement" >&2
  "$root/.venv/bin/python" - "$dest.tmp" "$@" <<'PY'
import pathlib, sys, zipfile
tmp, prefixes = pathlib.Path(sys.argv[1]), sys.argv[2:]
wheel = next(tmp.glob("*.whl"))
with zipfile.ZipFile(wheel) as z:
    for n in z.namelist():
        if any(n == p or (p.endswith("/") and n.startswith(p)) for p in prefixes):
            z.extract(n, tmp)
wheel.unlink()
PY
  mv "$dest.tmp" "$dest"
}
# cuDNN (convolutions): the release torch's CUDA 13 wheels carry on the GPU
# machine. Only its headers and libcudnn.so.9 (the API's front library, which
# loads the rest at run time) are kept: enough to compile and link.
cudnn_version=9.19.0.56
cudnn="$cache/nvidia-cudnn-$cudnn_version"
if [ ! -f "$cudnn/nvidia/cudnn/include/cudnn.h" ]; then
  wheel_files "$cudnn" "nvidia-cudnn-cu13==$cudnn_version" "cuDNN $cudnn_version headers" \
    nvidia/cudnn/include/ nvidia/cudnn/lib/libcudnn.so.9
else
  say "cuDNN $cudnn_version: present"
fi
# The cuDNN frontend (header-only C++; attention through cuDNN's graph API,
# lib/codegen_cuda/prelude/library/sdpa.cu). 1.16: later releases include
# NVRTC's headers, which the build machine does not have.
cudnn_frontend_version=1.16.0
cudnn_frontend="$cache/nvidia-cudnn-frontend-$cudnn_frontend_version"
if [ ! -f "$cudnn_frontend/include/cudnn_frontend.h" ]; then
  wheel_files "$cudnn_frontend" "nvidia-cudnn-frontend==$cudnn_frontend_version" \
    "the cuDNN frontend's headers" include/
else
  say "cuDNN frontend $cudnn_frontend_version: present"
fi
if [ ! -x /usr/local/cuda/bin/nvcc ] && ! command -v nvcc >/dev/null; then
  say "note: no nvcc (CUDA_HOME/bin/nvcc): dynoc build --target=cuda will say so"
fi
