# lit configuration for dynoc's IR tests: `dynoc opt` / `dynoc build` + FileCheck.
import os

import lit.formats

config.name = "dynoc-ir"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir"]
config.excludes = ["Inputs"]
config.test_source_root = os.path.dirname(__file__)
root = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
bin_dir = os.path.join(root, "bazel-bin", "tools", "dynoc")
config.environment["PATH"] = os.pathsep.join(
    [bin_dir, "/usr/lib/llvm-16/bin", config.environment.get("PATH", os.environ["PATH"])])
config.environment["HOME"] = os.environ.get("HOME", "/root")
# The Python lit runs under (tests that generate their input).
import sys  # noqa: E402
config.substitutions.append(("%python", sys.executable))
