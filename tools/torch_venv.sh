#!/usr/bin/env bash
# Prints the path of a CPython 3.11 environment with torch VERSION from PyPI
# (its default build, CUDA libraries included: they run on a CPU machine too)
# and what dynoc's tests need, made once per machine under
# ~/.cache/dynoc/torch-VERSION (tools/test.sh --torch-versions).
#   tools/torch_venv.sh 2.12.1
set -euo pipefail
v="${1:?usage: tools/torch_venv.sh TORCH_VERSION}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${XDG_CACHE_HOME:-$HOME/.cache}/dynoc/torch-$v"
if [ ! -f "$venv/.complete" ]; then
  echo "[torch_venv] making $venv (torch==$v from PyPI, a few GB, once per machine)" >&2
  rm -rf "$venv"
  py="$(ls -d "$HOME"/.pyenv/versions/3.11.*/bin/python3.11 2>/dev/null | sort -rV | head -1)"
  "${py:-python3.11}" -m venv "$venv"
  # The build's requirements but torch (and transformers, pinned to what
  # torch 2.13 runs): what the wheel and the JIT tests import.
  "$venv/bin/python" -m pip install -q "torch==$v" numpy safetensors pytest pytest-xdist \
    expecttest >&2
  # DYNOC_TORCH_COMPILE=1 routes torch.compile to dynoc in any process of it
  # (as tools/bootstrap.sh's environments; dynoc itself comes from PYTHONPATH
  # or an installed wheel).
  site="$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
  echo "import os; os.environ.get('DYNOC_TORCH_COMPILE') == '1' and __import__('dynoc').install()" \
    > "$site/dynoc.pth"
  touch "$venv/.complete"
fi
echo "$venv"
