#!/usr/bin/env bash
# Capture on the GPU machine, under its Python (3.12 there), build here, run
# there: the check that a script captured on another CPython version builds
# and runs (issue 17).
#
#   here:  bazel build //... && tools/gpu_capture.sh stage     (fills build/gpu/capture)
#   there: tools/gpu_capture.sh capture                        (carry build/gpu; writes $OUT/capture)
#   here:  tools/gpu_capture.sh build DIR                      (DIR: the capture fetched back)
#   there: tools/gpu_capture.sh run                            (carry build/gpu)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
art="$root/build/gpu/capture"
py="${PYTHON:-python3}"
case "${1:-}" in
  stage)
    # The capture extension for each version and the abi3 runtime binding.
    mkdir -p "$art/ext"
    cp -f "$root"/bazel-bin/lib/capture/_dynoc_C*.so "$root"/bazel-bin/lib/runtime/python/_dynrt.abi3.so "$art/ext/"
    ls "$art/ext" ;;
  capture)
    out="${OUT:-/tmp}/capture"
    mkdir -p "$out"
    export PYTHONPATH="$root/python:$art/ext"
    DYNOC_REF="$out/ref.pt" "$py" -m dynoc._capture_main --out "$out" "$root/test/gpu/capture_program.py"
    cat "$out/report.txt" 2>/dev/null || true ;;
  build)
    cap="${2:?tools/gpu_capture.sh build CAPTURE_DIR}"
    mkdir -p "$art/model"
    graph="$(python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); print(m["graphs"][0]["mlir"])' "$cap/manifest.json")"
    "$root/bazel-bin/tools/dynoc/dynoc" build --target=cuda "$cap/$graph" -o "$art/model/model.so"
    cp -f "$cap/ref.pt" "$art/model/ref.pt" ;;
  run)
    nvlib="$("$py" -c 'import os, nvidia; d = list(nvidia.__path__)[0]; print(os.path.join(d, "cu13", "lib") + ":" + os.path.join(d, "cudnn", "lib"))')"
    export LD_LIBRARY_PATH="$nvlib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
    export PYTHONPATH="$root/python:$art/ext"
    "$py" - "$art/model" <<'PY'
import sys, torch, dynoc
d = sys.argv[1]
ref = torch.load(f"{d}/ref.pt")
m = dynoc.load(f"{d}/model.so")
x = ref["x"].cuda()
for graphs in (False, True):
    y = dynoc.load(f"{d}/model.so", cuda_graphs=graphs)(x)
    y = y[0] if isinstance(y, (tuple, list)) else y
    err = (y.float().cpu() - ref["y"]).abs().max().item()
    print(f"built model on {torch.cuda.get_device_name()}, CUDA graphs {graphs}: "
          f"max abs error vs the captured program's output {err:.2e}")
    assert err < 1e-3, err
print("OK")
PY
    ;;
  *) sed -n '2,/^set /{/^set /!p}' "$0" | cut -c3-; exit 2 ;;
esac
