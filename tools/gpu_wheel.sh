#!/usr/bin/env bash
# The GPU machine as a user's machine (issue 53): the wheel installed with pip
# into a fresh target (no checkout on any path), `dynoc doctor`, then a
# transformers GPT-2 (a config, random weights) on the GPU compiled in process
# by dynoc.compile and through the CLI (dynoc capture + dynoc build
# --target=cuda + dynoc.load), each against eager. Exit 0 when all passed.
#
#   here:  tools/build_wheel.sh --out build/gpu/wheel
#   there: tools/gpu_wheel.sh          (carry build/gpu/wheel)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
py="${PYTHON:-python3}"
wheel="$(ls "$root"/build/gpu/wheel/dynoc-*.whl 2>/dev/null | head -1)"
[ -n "$wheel" ] || { echo "gpu_wheel.sh: no wheel in build/gpu/wheel: run tools/build_wheel.sh --out build/gpu/wheel here and carry it" >&2; exit 1; }
work="$(mktemp -d)"
target="$work/site"
step() { printf '== %s\n' "$*"; }

step "pip install $(basename "$wheel") --target (torch $("$py" -c 'import torch; print(torch.__version__)') is the machine's)"
# --no-deps: torch, numpy and safetensors are the machine's (no network there).
"$py" -m pip install -q --no-deps --target "$target" "$wheel"
# Nothing of the checkout: only the installed package and its scripts.
unset PYTHONPATH DYNOC_BIN DYNOC_CAPTURE_PATH DYNOC_CUBLAS_HOME DYNOC_CUDNN_HOME \
  DYNOC_CUDNN_FRONTEND_HOME DYNOC_TOOLCHAIN_HOME
export PYTHONPATH="$target" PATH="$target/bin:$PATH" DYNOC_CACHE_DIR="$work/cache"
cd "$work"
step "dynoc --version"; dynoc --version
step "dynoc doctor"; dynoc doctor

cat > model.py <<'PY'
"""A GPT-2 (transformers config, random weights) on the GPU; the logits of
one batch. With --save DIR, its input and eager's logits are saved there."""
import os, sys
import numpy as np
import torch
import transformers

torch.manual_seed(0)
config = transformers.GPT2Config(n_layer=2, n_embd=256, n_head=4, vocab_size=1000,
                                 n_positions=128, bos_token_id=0, eos_token_id=0)
model = transformers.GPT2LMHeadModel(config).cuda().eval()
ids = torch.randint(0, 1000, (2, 64), device="cuda")


def logits(ids):
    return model(ids, use_cache=False).logits


if __name__ == "__main__":
    with torch.no_grad():
        expected = logits(ids)
        got = torch.compile(logits)(ids)
    if "--save" in sys.argv:
        out = sys.argv[sys.argv.index("--save") + 1]
        os.makedirs(out, exist_ok=True)
        np.save(os.path.join(out, "ids.npy"), ids.cpu().numpy())
        np.save(os.path.join(out, "expected.npy"), expected.cpu().numpy())
    print("captured logits", tuple(got.shape))
PY

step "in process: dynoc.compile on the GPU"
"$py" - <<'PY'
import torch, dynoc
import model as m
assert "site-packages" in dynoc.__file__ or "/site/" in dynoc.__file__, dynoc.__file__
c = dynoc.compile(m.logits, fullgraph=True)
with torch.no_grad():
    want = m.logits(m.ids)
    c(m.ids)
    got = c(m.ids)
err = float((got - want).abs().max() / want.abs().max())
calls = dynoc.counters["compiled_calls"]
print(f"dynoc.compile: max relative difference vs eager {err:.2e}, compiled calls {calls}, "
      f"eager variants {dynoc.counters['eager_variants']}")
assert calls >= 1 and err < 1e-3, "not compiled, or not eager's numbers"
PY

step "the CLI: dynoc capture, dynoc build --target=cuda, dynoc.load"
dynoc capture model.py -o captured -- --save io
arch="sm_$("$py" -c 'import torch; a, b = torch.cuda.get_device_capability(); print(f"{a}{b}")')"
dynoc build captured/graph_0.mlir -o gpt2.so --target=cuda --arch="$arch"
"$py" - <<'PY'
import numpy as np, torch, dynoc
loaded = dynoc.load("gpt2.so")
ids = torch.from_numpy(np.load("io/ids.npy")).cuda()
want = torch.from_numpy(np.load("io/expected.npy")).cuda()
got = loaded(ids)
got = got[0] if isinstance(got, (tuple, list)) else got
err = float((got - want).abs().max() / want.abs().max())
print(f"dynoc build --target=cuda + dynoc.load: max relative difference vs eager {err:.2e}")
assert err < 1e-3
PY
step "all passed (wheel: $(du -h "$wheel" | cut -f1))"
