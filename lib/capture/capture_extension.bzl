"""The capture extension, built once per CPython version."""

load("@python312//:defs.bzl", PY312 = "AVAILABLE", PY312_SUFFIX = "EXT_SUFFIX")
load("@python313//:defs.bzl", PY313 = "AVAILABLE", PY313_SUFFIX = "EXT_SUFFIX")

# The evaluator is one C++ source set for every CPython version; what differs
# is the frame hook's accessor block (frame_hook.c) and the bytecode decoder
# (opcodes_py3XX.cpp), both compiled against that version's headers.
EVALUATOR_SRCS = [
    "attr_snapshot.cpp",
    "attr_snapshot.h",
    "dispatcher.cpp",
    "dispatcher.h",
    "evaluator.cpp",
    "evaluator.h",
    "evaluator_calls.cpp",
    "evaluator_containers.cpp",
    "evaluator_exceptions.cpp",
    "evaluator_internal.h",
    "evaluator_match.cpp",
    "evaluator_names.cpp",
    "evaluator_operators.cpp",
    "evaluator_support.cpp",
    "exception_table.cpp",
    "exception_table.h",
    "exceptions.cpp",
    "exceptions.h",
    "frame_hook.h",
    "guard_check.cpp",
    "guard_check.h",
    "opcodes.h",
    "opcodes_common.inc",
    "opcodes_since312.inc",
    "python_compat.h",
    "size_sources.cpp",
    "size_sources.h",
    "module.cpp",
]

# One extension per CPython version, named with that version's suffix so
# that all of them sit in one directory (3.11's keeps its historic plain
# name, which only 3.11 imports first).
def _capture_extension(name, version, python):
    """_dynoc_C for one CPython version (\"311\"), against `python`'s headers."""
    native.cc_library(
        name = "frame_hook_" + version,
        srcs = ["frame_hook.c"],
        hdrs = ["frame_hook.h"],
        deps = [python],
    )
    native.cc_binary(
        name = name,
        srcs = EVALUATOR_SRCS + ["opcodes_py" + version + ".cpp"],
        linkshared = True,
        deps = [
            ":frame_hook_" + version,
            python,
        ],
    )


def capture_extensions():
    """_dynoc_C for 3.11 (the build's own Python), and for 3.12 and 3.13 where
    this machine has them (third_party/bazel/system_libs.bzl finds them)."""
    names = ["_dynoc_C.so"]
    _capture_extension(names[-1], "311", "@python//:headers")
    if PY312:
        names.append("_dynoc_C" + PY312_SUFFIX)
        _capture_extension(names[-1], "312", "@python312//:headers")
    if PY313:
        names.append("_dynoc_C" + PY313_SUFFIX)
        _capture_extension(names[-1], "313", "@python313//:headers")
    native.filegroup(name = "extensions", srcs = names)
