"""Runs a corpus program under PyTorch's own Dynamo, as the reference.

`python dynamo_reference.py OUT.json PROGRAM [ARGS]` runs PROGRAM as `python3
PROGRAM` would, with torch.compile and torch._dynamo.optimize given a backend that
counts graphs and runs them eagerly (so the output is eager's), and writes
Dynamo's graph count, graph break count and break reasons to OUT.json.
"""
import json
import os
import runpy
import sys

import torch
import torch._dynamo
import torch._inductor
from torch._dynamo.utils import counters

graphs = []


def counting_backend(gm, example_inputs):
    graphs.append(sorted({str(n.target) for n in gm.graph.nodes if n.op == "call_function"}))
    return gm.forward


_compile = torch.compile
_optimize = torch._dynamo.optimize


def compile_(model=None, **kwargs):
    kwargs["backend"] = counting_backend
    if kwargs.get("mode") is not None:  # torch.compile's own check of the mode
        torch._inductor.list_mode_options(kwargs["mode"])
    kwargs.pop("mode", None)
    kwargs.pop("options", None)
    if model is None:
        return lambda m: _compile(m, **kwargs)
    return _compile(model, **kwargs)


def optimize(backend="inductor", *args, **kwargs):
    return _optimize(counting_backend, *args, **kwargs)


def main():
    out, program = sys.argv[1], sys.argv[2]
    sys.argv = sys.argv[2:]
    sys.path[0] = os.path.dirname(os.path.abspath(program))
    torch.compile = compile_
    torch._dynamo.optimize = optimize
    code = 0
    try:
        runpy.run_path(program, run_name="__main__")
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else 1
    except BaseException:
        import traceback
        traceback.print_exc()
        code = 1
    finally:
        sys.stdout.flush()
        with open(out, "w") as f:
            json.dump({"graphs": len(graphs),
                       "breaks": sum(counters["graph_break"].values()),
                       "break_reasons": sorted(counters["graph_break"]),
                       "exit": code}, f, indent=1)
    return code


if __name__ == "__main__":
    sys.exit(main())
