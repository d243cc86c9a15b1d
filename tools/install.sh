#!/usr/bin/env bash
# Lays out libdynrt for C and C++ programs outside this tree:
#   tools/install.sh PREFIX
# writes PREFIX/include/dynrt/{dynrt.h,dynrt.hpp} (+ include/dlpack/dlpack.h),
# PREFIX/lib/libdynrt.so (and libdynrt_gloo.so, its gloo communicator plugin),
# PREFIX/lib/pkgconfig/dynrt.pc and
# PREFIX/lib/cmake/dynrt/ (find_package(dynrt) -> dynrt::dynrt) and
# PREFIX/bin/dynrt-bench. It builds //lib/runtime:libdynrt.so and
# //tools/bench:dynrt-bench first. docs/runtime.md, "Using libdynrt elsewhere".
set -euo pipefail
if [[ $# -ne 1 || $1 == -h || $1 == --help ]]; then
  echo "usage: tools/install.sh PREFIX" >&2
  exit 2
fi
root=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$1"
prefix=$(cd "$1" && pwd)
version=$(sed -n 's/^__version__ = "\(.*\)"$/\1/p' "$root/python/dynoc/_version.py")
[[ -n $version ]] || { echo "install.sh: no __version__ in _version.py" >&2; exit 1; }

cd "$root"
bazel build //lib/runtime:libdynrt.so //lib/runtime/gloo:libdynrt_gloo.so //tools/bench:dynrt-bench >&2
dlpack=/usr/include/dlpack/dlpack.h
[[ -f $dlpack ]] || { echo "install.sh: $dlpack missing (apt-get install libdlpack-dev)" >&2; exit 1; }

install -d "$prefix/include/dynrt" "$prefix/include/dlpack" "$prefix/lib/pkgconfig" \
  "$prefix/lib/cmake/dynrt" "$prefix/bin"
install -m 644 lib/runtime/include/dynrt/dynrt.h lib/runtime/include/dynrt/dynrt.hpp \
  "$prefix/include/dynrt/"
install -m 644 "$dlpack" "$prefix/include/dlpack/"
install -m 755 bazel-bin/lib/runtime/libdynrt.so "$prefix/lib/"
# The gloo communicator's plugin, beside libdynrt.so where libdynrt looks.
install -m 755 bazel-bin/lib/runtime/gloo/libdynrt_gloo.so "$prefix/lib/"
install -m 755 bazel-bin/tools/bench/dynrt-bench "$prefix/bin/"
sed -e "s|@PREFIX@|$prefix|" -e "s|@VERSION@|$version|" lib/runtime/install/dynrt.pc.in \
  > "$prefix/lib/pkgconfig/dynrt.pc"
install -m 644 lib/runtime/install/dynrtConfig.cmake "$prefix/lib/cmake/dynrt/"
sed -e "s|@VERSION@|$version|" lib/runtime/install/dynrtConfigVersion.cmake.in \
  > "$prefix/lib/cmake/dynrt/dynrtConfigVersion.cmake"
echo "installed libdynrt $version into $prefix" >&2
