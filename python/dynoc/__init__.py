"""dynoc: ahead-of-time graph capture and compilation for PyTorch programs.

Under `dynoc capture`, torch.compile and torch._dynamo.optimize route here, so
scripts written for them run unmodified. This module re-exports; the entry
points live in _api.py (docs/capture.md, "The Python package").
"""
import os

from ._api import (allow_in_graph, compile, config, disable, disallow_in_graph,
                   forbid_in_graph, graph_break, install, is_compiling, is_dynamo_compiling,
                   mark_dynamic, mark_static, optimize, optimize_assert, reset, run)
from .runtime.trainable import TrainableModel, load_trainable
from ._backends import list_backends, register_backend
from .jit.compiled_module import CompiledModule
from .runtime.communicators import GlooCommunicator, NcclCommunicator, TorchDistributedCommunicator
from ._errors import BuildFailed, unsupported_type
from ._explain import ExplainOutput, ExportResult, explain, export
from .jit.built import counters, write_stats
from .runtime.model import Error, GuardError, LoadedModel, load, profile, set_runtime_log
from ._version import __version__

if os.environ.get("DYNOC_STATS"):
    import atexit
    atexit.register(write_stats, os.environ["DYNOC_STATS"])

__all__ = ["compile", "optimize", "optimize_assert", "is_compiling", "is_dynamo_compiling",
           "list_backends", "reset", "config", "allow_in_graph", "disallow_in_graph",
           "forbid_in_graph", "graph_break", "disable", "mark_dynamic", "mark_static",
           "run", "install", "register_backend", "counters", "export", "ExportResult",
           "Unsupported", "BuildFailed", "load", "LoadedModel", "load_trainable", "TrainableModel", "Error",
           "GuardError", "explain", "ExplainOutput", "profile", "set_runtime_log",
           "TorchDistributedCommunicator", "NcclCommunicator", "GlooCommunicator"]


def __getattr__(name):
    if name == "Unsupported":  # made on first use (_errors.unsupported_type)
        return unsupported_type()
    raise AttributeError(f"module 'dynoc' has no attribute '{name}'")
