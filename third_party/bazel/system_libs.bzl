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
    python = ctx.os.environ.get("DYNOC_PYTHON", root + "/.venv/bin/python")
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
    environ = ["DYNOC_PYTHON"],
    local = True,
)
