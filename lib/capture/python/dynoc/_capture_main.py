"""`dynoc capture` runs this in the project's Python: the user's script runs as
`python3 SCRIPT ARGS` would, with torch.compile routed to dynoc; at exit the
captured graphs are written (even when the script raised)."""
import argparse
import os
import runpy
import sys
import traceback


def _route_torch_entry_points(dynoc):
    import torch
    import torch._dynamo
    import torch.compiler
    torch.compile = dynoc.compile
    for name in ("optimize", "optimize_assert", "allow_in_graph", "disallow_in_graph",
                 "forbid_in_graph", "graph_break", "disable", "mark_dynamic", "mark_static",
                 "is_compiling", "explain", "reset"):
        setattr(torch._dynamo, name, getattr(dynoc, name))
    from dynoc import _region
    _region.read_limit = lambda: torch._dynamo.config.cache_size_limit
    for name in ("allow_in_graph", "disable", "is_compiling", "is_dynamo_compiling", "reset"):
        setattr(torch.compiler, name, getattr(dynoc, name))


def main():
    p = argparse.ArgumentParser(prog="dynoc capture")
    p.add_argument("--out", required=True)
    p.add_argument("--backend", default="eager")
    p.add_argument("script")
    p.add_argument("args", nargs=argparse.REMAINDER)
    a = p.parse_args()
    if sys.version_info[:2] != (3, 11):
        sys.stderr.write(f"dynoc capture: error: CPython 3.11 is required; "
                         f"{sys.executable} is {sys.version.split()[0]}\n")
        return 3
    import dynoc
    from dynoc import _session
    session = _session.start(a.out, a.backend, os.path.abspath(a.script))
    _route_torch_entry_points(dynoc)
    sys.argv = [a.script] + [x for x in a.args if x != "--"]
    sys.path[0] = os.path.dirname(os.path.abspath(a.script))
    code = 0
    try:
        runpy.run_path(a.script, run_name="__main__")
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        if e.code is not None and not isinstance(e.code, int):
            sys.stderr.write(f"{e.code}\n")
    except BaseException as e:  # the script's own exception: print it as python would
        tb = e.__traceback__
        while tb is not None and tb.tb_frame.f_code.co_filename != os.path.abspath(a.script) \
                and "runpy" in tb.tb_frame.f_code.co_filename or (tb and tb.tb_frame.f_code.co_filename == __file__):
            tb = tb.tb_next
        sys.stderr.write("Traceback (most recent call last):\n")
        sys.stderr.write("".join(traceback.format_list(traceback.extract_tb(tb))))
        sys.stderr.write("".join(traceback.format_exception_only(type(e), e)))
        code = 1
    finally:
        sys.stdout.flush()
        session.write()
    return code


if __name__ == "__main__":
    sys.exit(main())
