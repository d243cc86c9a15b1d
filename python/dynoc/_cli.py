"""The `dynoc` command of an installed wheel: runs the dynoc binary the wheel
carries (dynoc/_bin/dynoc) with this Python as the one capture runs scripts in
and this environment's site-packages as where dynoc's package lives."""
import os
import sys

from . import _toolchain


def _binary(name="dynoc"):
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "_bin", name)


def main():
    binary = _binary()
    if not os.path.exists(binary):
        sys.stderr.write(f"dynoc: error: the dynoc binary is not at {binary}: this `dynoc` "
                         "package was not installed from a wheel (in a checkout, run "
                         "bazel-bin/tools/dynoc/dynoc)\n")
        return 1
    env = _toolchain.build_env()
    env.setdefault("DYNOC_PYTHON", sys.executable)
    env.setdefault("DYNOC_CAPTURE_PATH",
                   os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    os.execve(binary, [binary] + sys.argv[1:], env)


def bench():
    """The `dynrt-bench` command: dynoc bench linking libdynrt only."""
    binary = _binary("dynrt-bench")
    if not os.path.exists(binary):
        sys.stderr.write(f"dynrt-bench: error: the binary is not at {binary}: this `dynoc` "
                         "package was not installed from a wheel (in a checkout, run "
                         "bazel-bin/tools/bench/dynrt-bench)\n")
        return 1
    os.execv(binary, [binary] + sys.argv[1:])


if __name__ == "__main__":
    sys.exit(main())
