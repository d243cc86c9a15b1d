"""dynoc: ahead-of-time graph capture and compilation for PyTorch programs.

Under `dynoc capture`, torch.compile and torch._dynamo.optimize route here, so
scripts written for them run unmodified.
"""
import functools

from . import _region, _session
from ._explain import ExplainOutput, explain
from ._runtime import Error, GuardError, LoadedModel, load

__all__ = ["compile", "optimize", "is_compiling", "list_backends", "reset", "config",
           "load", "LoadedModel", "Error", "GuardError", "explain", "ExplainOutput"]

_BACKENDS = {"eager": ("debug",), "inductor": ()}


class config:
    """Settings, named as in torch._dynamo.config."""
    cache_size_limit = 64


def list_backends(exclude_tags=("debug", "experimental")):
    exclude = set(exclude_tags or ())
    return sorted(n for n, tags in _BACKENDS.items() if not exclude.intersection(tags))


def compile(model=None, *, fullgraph=False, dynamic=None, backend="inductor", mode=None,
            options=None, disable=False):
    """Like torch.compile: returns a callable that records `model` as a capture
    region (it still runs eagerly, with unchanged results)."""
    if model is None:
        return lambda m: compile(m, fullgraph=fullgraph, dynamic=dynamic, backend=backend,
                                 mode=mode, options=options, disable=disable)
    if disable:
        return model
    if isinstance(backend, str) and backend not in _BACKENDS:
        raise ValueError(f"dynoc: unknown backend '{backend}' (known: {', '.join(_BACKENDS)})")
    _region.cache_size_limit = config.cache_size_limit
    region = _region.Region(model, backend, fullgraph, dynamic)
    if callable(model) and not hasattr(model, "forward"):
        functools.update_wrapper(region, model, updated=())
    return region


def optimize(backend="inductor", *, nopython=False, dynamic=None):
    """Like torch._dynamo.optimize: a decorator making a capture region."""
    return lambda fn: compile(fn, backend=backend if isinstance(backend, str) else "inductor",
                              fullgraph=nopython, dynamic=dynamic)


def is_compiling():
    return False


def reset():
    _session.current().graphs.clear()
