"""dynoc's version: the one place it is written (lib/version/BUILD.bazel makes
the C++ header dynoc/Version.h from this line)."""
__version__ = "0.1.0"
