"""Brings Debian's system libraries and the project's Python into the build."""

def system_libs():
    native.new_local_repository(
        name = "llvm",
        path = "/usr/lib/llvm-16",
        build_file = "//third_party/bazel:llvm.BUILD",
    )
    native.new_local_repository(
        name = "system",
        path = "/usr",
        build_file = "//third_party/bazel:system.BUILD",
    )

def _python_configure_impl(ctx):
    root = str(ctx.path(Label("//:WORKSPACE")).dirname)
    # The build's Python is always the project's 3.11 environment; DYNOC_PYTHON
    # (the Python that `dynoc capture` runs) is read at run time, not here.
    python = ctx.os.environ.get("DYNOC_BUILD_PYTHON", root + "/.venv/bin/python")
    res = ctx.execute([python, "-c", "import sysconfig;print(sysconfig.get_paths()['include'])"])
    if res.return_code != 0:
        fail("dynoc: cannot run %s (run tools/bootstrap.sh first): %s" % (python, res.stderr))
    include = res.stdout.strip()
    ctx.symlink(include, "include")
    ctx.file("python_config.h", "#pragma once\n#define DYNOC_PYTHON \"%s\"\n" % python)
    ctx.file("BUILD", """
cc_library(
    name = "headers",
    hdrs = glob(["include/**/*.h"]),
    includes = ["include", "include/internal"],
    visibility = ["//visibility:public"],
)
cc_library(
    name = "config",
    hdrs = ["python_config.h"],
    include_prefix = "python",
    visibility = ["//visibility:public"],
)
""")

python_configure = repository_rule(
    implementation = _python_configure_impl,
    environ = ["DYNOC_BUILD_PYTHON"],
    local = True,
)

def _find_python(ctx, version):
    """A CPython `version` ("3.12") on this machine: the project's venv for it,
    pyenv's, or one on PATH; None when there is none."""
    root = str(ctx.path(Label("//:WORKSPACE")).dirname)
    candidates = [root + "/.venv-" + version + "/bin/python"]
    home = ctx.os.environ.get("HOME", "")
    pyenv = ctx.path(home + "/.pyenv/versions")
    if home and pyenv.exists:
        for d in sorted([str(p) for p in pyenv.readdir()], reverse = True):
            if d.split("/")[-1].startswith(version + "."):
                candidates.append(d + "/bin/python" + version)
    on_path = ctx.which("python" + version)
    if on_path:
        candidates.append(str(on_path))
    for c in candidates:
        if ctx.path(c).exists:
            res = ctx.execute([c, "-c", "import sys, sysconfig; print('%d.%d' % sys.version_info[:2]); print(sysconfig.get_paths()['include']); print(sysconfig.get_config_var('EXT_SUFFIX'))"])
            lines = res.stdout.strip().split("\n")
            if res.return_code == 0 and len(lines) == 3 and lines[0] == version:
                return lines
    return None

def _python_headers_impl(ctx):
    version = ctx.attr.version
    found = _find_python(ctx, version)
    if found:
        ctx.symlink(found[1], "include")
    ctx.file("defs.bzl", "AVAILABLE = %s\nEXT_SUFFIX = %r\n" % (
        "True" if found else "False", found[2] if found else ""))
    ctx.file("BUILD", """
cc_library(
    name = "headers",
    hdrs = glob(["include/**/*.h"]),
    includes = ["include", "include/internal"],
    visibility = ["//visibility:public"],
)
""")

# Headers of another CPython version, for the capture extension built per
# version (lib/capture): `available` is False on a machine without it, and
# that version's extension is then not built.
python_headers = repository_rule(
    implementation = _python_headers_impl,
    attrs = {"version": attr.string(mandatory = True)},
    environ = ["HOME", "PATH"],
    local = True,
)
