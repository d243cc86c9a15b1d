#!/usr/bin/env bash
# dynoc.compile in the same process on the GPU (issue 16): the GPU machine
# builds CUDA models itself, so it needs the dynoc binary, which normally
# links Debian's MLIR/LLVM 16 shared libraries (too big to carry). `stage`
# builds one with them linked in statically (tools/portable_cli.sh).
#
#   here:  bazel build //... && tools/gpu_jit.sh stage   (fills build/gpu/jit, ~22 MB)
#   there: tools/gpu_jit.sh test [PYTEST ARGS]           (carry build/gpu/jit and build/gpu/bin)
#   there: tools/gpu_jit.sh bench [BENCH ARGS]           (bench/jit/gpu.py; writes $OUT/perf-jit-cuda.md)
#   there: tools/gpu_jit.sh run SCRIPT.py [ARGS]         (any script, in the same environment)
#
# Both run with the dynoc binary building for the GPU there (nvcc, and
# cuBLASLt/cuDNN headers from torch's CUDA wheels).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
art="$root/build/gpu"
jit="$art/jit"
py="${PYTHON:-python3}"
case "${1:-}" in
  stage)
    mkdir -p "$jit/ext"
    cp -f "$("$root/tools/portable_cli.sh")" "$jit/dynoc"
    cp -fL /lib/x86_64-linux-gnu/libfmt.so.9 "$jit/"
    cp -f "$root"/bazel-bin/lib/capture/_dynoc_C.cpython-3*.so "$jit/ext/"
    # The cuDNN frontend's headers (bf16/f16 attention through cuDNN): the
    # GPU machine's torch has cuDNN but not these (tools/bootstrap.sh).
    fe="${XDG_CACHE_HOME:-$HOME/.cache}/dynoc/nvidia-cudnn-frontend-1.16.0"
    rm -rf "$jit/cudnn-frontend" && mkdir -p "$jit/cudnn-frontend"
    cp -r "$fe/include" "$jit/cudnn-frontend/"
    chmod u+w "$jit/dynoc" "$jit"/ext/*
    du -sh "$jit" ;;
  test|bench|run)
    [ -x "$jit/dynoc" ] || { echo "gpu_jit.sh: $jit/dynoc is missing: run 'tools/gpu_jit.sh stage' on the build machine and carry build/gpu/jit" >&2; exit 1; }
    . "$root/tools/gpu_env.sh"
    export PYTHONPATH="$jit/ext:$PYTHONPATH"
    nv="$("$py" -c 'import nvidia; print(list(nvidia.__path__)[0])')"
    export DYNOC_BIN="$jit/dynoc" DYNOC_CUBLAS_HOME="$nv/cu13" DYNOC_CUDNN_HOME="$nv/cudnn" \
      DYNOC_CUDNN_FRONTEND_HOME="$jit/cudnn-frontend"
    export DYNOC_CACHE_DIR="${DYNOC_CACHE_DIR:-/tmp/dynoc-jit-cache}"
    "$py" -c 'import torch; print("GPU:", torch.cuda.get_device_name(), "| torch", torch.__version__)'
    "$DYNOC_BIN" --version
    if [ "$1" = test ]; then
      "$py" -m pytest -q -p no:cacheprovider -s "$root/test/gpu/test_jit_cuda.py" "${@:2}"
    elif [ "$1" = run ]; then
      "$py" "${@:2}"
    else
      "$py" "$root/bench/jit/gpu.py" "${@:2}"
    fi ;;
  *) sed -n '2,/^set /{/^set /!p}' "$0" | cut -c3-; exit 2 ;;
esac
