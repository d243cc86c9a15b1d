"""dynoc's version: the one place it is written (lib/version/BUILD.bazel makes
the C++ header dynoc/Version.h from this line)."""
__version__ = "0.1.0"

# The CPython versions whose bytecode the capture evaluator runs (one
# extension per version: lib/capture/capture_extension.bzl).
SUPPORTED_PYTHONS = ((3, 11), (3, 12), (3, 13))


def unsupported_python_message(version_info, executable):
    """One line saying this Python cannot capture, or None when it can."""
    if tuple(version_info[:2]) in SUPPORTED_PYTHONS:
        return None
    names = ", ".join("%d.%d" % v for v in SUPPORTED_PYTHONS)
    return ("CPython %d.%d.%d at %s cannot capture: dynoc's evaluator runs "
            "CPython %s" % (*version_info[:3], executable, names))
