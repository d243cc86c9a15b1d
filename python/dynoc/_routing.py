"""torch's entry points routed to dynoc (`dynoc capture`, DYNOC_TORCH_COMPILE=1,
dynoc.install()): torch.compile, torch.compiler's functions and
torch._dynamo's, so scripts written for them run unmodified."""
import importlib.abc
import importlib.util
import sys

import torch
import torch.compiler

from . import _collectives, _region


_DYNAMO_NAMES = ("optimize", "optimize_assert", "allow_in_graph", "disallow_in_graph",
                 "forbid_in_graph", "graph_break", "disable", "mark_dynamic", "mark_static",
                 "is_compiling", "explain", "reset", "run", "export", "list_backends",
                 "register_backend")


def _patch_dynamo(dynoc, dynamo):
    for name in _DYNAMO_NAMES:
        setattr(dynamo, name, getattr(dynoc, name))
    _region.read_limit = lambda: dynamo.config.cache_size_limit
    # `isinstance(m, torch._dynamo.eval_frame.OptimizedModule)` (accelerate's
    # and DDP's test for a compiled module) is true of what compile returns.
    dynamo.eval_frame.OptimizedModule = dynamo.OptimizedModule = dynoc.CompiledModule


class _PatchDynamoOnImport(importlib.abc.MetaPathFinder):
    """Routes torch._dynamo's entry points to dynoc when the script imports it.
    Importing torch._dynamo up front would cost every capture about a second."""

    def __init__(self, dynoc):
        self.dynoc = dynoc

    def find_spec(self, fullname, path, target=None):
        if fullname != "torch._dynamo":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(fullname)
        exec_module, dynoc = spec.loader.exec_module, self.dynoc

        def exec_and_patch(module):
            exec_module(module)
            _patch_dynamo(dynoc, module)
        spec.loader.exec_module = exec_and_patch
        return spec


def _distributed_available():
    import torch.distributed
    return torch.distributed.is_available()


def route_torch_entry_points(dynoc):
    torch.compile = dynoc.compile
    for name in ("allow_in_graph", "disable", "is_compiling", "is_dynamo_compiling", "reset",
                 "list_backends"):
        setattr(torch.compiler, name, getattr(dynoc, name))
    if _distributed_available():  # torch.distributed's in-place collectives
        _collectives.route_inplace_collectives()
    if "torch._dynamo" in sys.modules:
        _patch_dynamo(dynoc, sys.modules["torch._dynamo"])
    else:
        sys.meta_path.insert(0, _PatchDynamoOnImport(dynoc))
