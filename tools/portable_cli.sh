#!/usr/bin/env bash
# Prints the path of a dynoc binary with MLIR/LLVM linked in statically
# (bazel --config=portable), for machines without Debian's LLVM 16: the
# wheel's CLI (tools/build_wheel.sh) and the GPU machine's (tools/gpu_jit.sh).
#
# It links in an output base of its own, so the checkout's bazel-bin/ keeps
# the usual binary throughout (tests may be running it); the compiled objects
# come from the shared disk cache (.bazelrc), so only the link runs.
#   tools/portable_cli.sh        -> /root/.cache/dynoc-bazel-portable/…/dynoc
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
base="$HOME/.cache/dynoc-bazel-portable/$(printf %s "$root" | sha256sum | cut -c1-12)"
cd "$root"
# --symlink_prefix=/: no bazel-* links (they would point the checkout's
# build at this output base).
bazel --output_base="$base" build --config=portable --symlink_prefix=/ \
  //tools/dynoc:dynoc >&2
bin="$(bazel --output_base="$base" info --config=portable bazel-bin 2>/dev/null)"
# The server of this output base is not needed between wheel builds.
bazel --output_base="$base" shutdown 2>/dev/null || true
echo "$bin/tools/dynoc/dynoc"
