"""`dynoc capture` runs this in the project's Python: the user's script runs as
`python3 SCRIPT ARGS` would, with torch.compile routed to dynoc; at exit the
captured graphs are written (even when the script raised)."""
import argparse
import os
import runpy
import sys
import traceback
import types

import torch

import dynoc
from . import _region
from ._routing import route_torch_entry_points
from ._version import unsupported_python_message
from .capture import session as _session

_PACKAGE = os.path.dirname(os.path.abspath(__file__))

# Names whose use makes a script's regions explicit (torch.compile & co.).
_REGION_APIS = {"compile", "optimize", "optimize_assert"}
_REGION_OWNERS = {"torch", "_dynamo", "dynoc", "compiler"}


def _calls_region_api(code):
    """Does the script (any of its code objects) name torch.compile,
    torch._dynamo.optimize or dynoc.compile? Then those are the regions;
    otherwise the whole script is one."""
    names = set(code.co_names)
    if names & _REGION_APIS and names & _REGION_OWNERS:
        return True
    return any(_calls_region_api(c) for c in code.co_consts if isinstance(c, types.CodeType))


def _run_whole_script(dynoc, path, max_ops, record_all_iterations=False):
    """Runs the script's module code as one region (as runpy would run it)."""
    with open(path, "rb") as f:
        source = f.read()
    code = compile(source, path, "exec")
    module = types.ModuleType("__main__")
    module.__file__ = path
    module.__builtins__ = __builtins__
    sys.modules["__main__"] = module
    if not _calls_region_api(code):
        script = types.FunctionType(code, module.__dict__, "<module>")
        live = lambda: [v for v in module.__dict__.values() if isinstance(v, torch.Tensor)]  # noqa: E731
        region = _region.Region(script, live=live)
        region.op_budget = max_ops
        region.skip_settled_loops = not record_all_iterations
        return region()
    exec(code, module.__dict__)


def main():
    p = argparse.ArgumentParser(prog="dynoc capture")
    p.add_argument("--out", required=True)
    p.add_argument("--backend", default="eager")
    p.add_argument("--entry", default=None,
                   help="MODULE:FUNC: every call of FUNC is the region")
    p.add_argument("--max-ops", type=int, default=0,
                   help="whole scripts: stop recording once the graphs hold this many ops (0: no limit)")
    p.add_argument("--record-all-iterations", action="store_true",
                   help="whole scripts: record every iteration of a settled training loop")
    p.add_argument("script")
    p.add_argument("args", nargs=argparse.REMAINDER)
    a = p.parse_args()
    why = unsupported_python_message(sys.version_info, sys.executable)
    if why:
        sys.stderr.write(f"dynoc capture: error: {why}\n")
        return 3
    session = _session.start(a.out, a.backend, os.path.abspath(a.script))
    route_torch_entry_points(dynoc)
    sys.argv = [a.script] + [x for x in a.args if x != "--"]
    sys.path[0] = os.path.dirname(os.path.abspath(a.script))
    code = 0
    script_path = os.path.abspath(a.script)
    try:
        if a.entry:
            module, sep, func = a.entry.rpartition(":")
            if not sep or not module or not func:
                sys.stderr.write(f"dynoc capture: error: --entry '{a.entry}' is not MODULE:FUNC\n")
                return 2
            stem = os.path.splitext(os.path.basename(a.script))[0]
            _region.set_entry([module] + (["__main__"] if module == stem else []), func)
            runpy.run_path(a.script, run_name="__main__")
        else:
            _run_whole_script(dynoc, script_path, a.max_ops or None, a.record_all_iterations)
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        if e.code is not None and not isinstance(e.code, int):
            sys.stderr.write(f"{e.code}\n")
    except BaseException as e:  # the script's own exception: print it as python would
        # Start at the script's first frame: dynoc's own frames are not the
        # user's (a syntax error has no script frame: keep what is there).
        tb = e.__traceback__
        t = tb
        while t is not None and t.tb_frame.f_code.co_filename != script_path:
            t = t.tb_next
        if t is None and not isinstance(e, SyntaxError) and \
                any(f.filename.startswith(_PACKAGE) for f in traceback.extract_tb(tb)):
            # Not the script's exception: dynoc's own, with its frames.
            sys.stderr.write("dynoc capture: internal error (the script's own run is not "
                             "at fault; please report this):\n")
            t = tb
        tb = t if t is not None else None
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
