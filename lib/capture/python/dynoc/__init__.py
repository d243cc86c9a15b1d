"""dynoc: ahead-of-time graph capture and compilation for PyTorch programs.

Under `dynoc capture`, torch.compile and torch._dynamo.optimize route here, so
scripts written for them run unmodified.
"""
import functools

import torch

from . import _region, _session
from ._compiled_module import CompiledModule
from ._explain import ExplainOutput, explain
from ._autograd import TrainableModel, load_trainable
from ._runtime import Error, GuardError, LoadedModel, load

__all__ = ["compile", "optimize", "optimize_assert", "is_compiling", "is_dynamo_compiling",
           "list_backends", "reset", "config", "allow_in_graph", "disallow_in_graph",
           "forbid_in_graph", "graph_break", "disable", "mark_dynamic", "mark_static",
           "load", "LoadedModel", "load_trainable", "TrainableModel", "Error", "GuardError", "explain", "ExplainOutput"]

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
    if isinstance(model, torch.nn.Module):
        return CompiledModule(model, region)
    if callable(model) and not hasattr(model, "forward"):
        functools.update_wrapper(region, model, updated=())
    return region


def optimize(backend="inductor", *, nopython=False, dynamic=None, disable=False):
    """Like torch._dynamo.optimize: a decorator making a capture region."""
    return lambda fn: compile(fn, backend=backend if isinstance(backend, str) else "inductor",
                              fullgraph=nopython, dynamic=dynamic, disable=disable)


def optimize_assert(backend="inductor", *, dynamic=None):
    """Like torch._dynamo.optimize_assert: optimize(nopython=True)."""
    return optimize(backend, nopython=True, dynamic=dynamic)


def is_compiling():
    """True while dynoc's evaluator runs a capture region (as torch.compiler.
    is_compiling is while Dynamo traces)."""
    return _region.capturing > 0


is_dynamo_compiling = is_compiling


def _mark(fn, kind):
    if not callable(fn):
        raise TypeError(f"dynoc: {kind} expects a function, got {type(fn).__name__}")
    _region.special_calls[fn] = kind
    return fn


def allow_in_graph(fn):
    """Calls to `fn` are not followed: it runs as a unit and its ATen calls are
    recorded into the graph, with no break for what it does in Python."""
    return _mark(fn, "allow")


def disallow_in_graph(fn):
    """A call to `fn` inside a region is a graph break; it runs eagerly."""
    return _mark(fn, "disallow")


def forbid_in_graph(fn):
    """A call to `fn` inside a region is an error naming it."""
    return _mark(fn, "forbid")


def graph_break():
    """Inside a region: ends the current graph (a break with this reason)."""


_mark(graph_break, "graph_break")


def disable(fn=None, recursive=True, *, reason=None, wrapping=True):
    """Like torch._dynamo.disable: `fn` runs eagerly, outside any graph (a graph
    break where a region calls it). recursive=False: only fn's own frame runs
    eagerly; each user function it calls is a region of its own."""
    if fn is None:
        return lambda f: disable(f, recursive, reason=reason)
    if isinstance(fn, _region.Region):
        return fn.target
    if isinstance(fn, CompiledModule):
        return fn._orig_mod
    if getattr(fn, "__module__", "").startswith("torch."):
        return fn  # torch's own uses: library code is never followed anyway

    @functools.wraps(fn)
    def disabled(*args, **kwargs):
        return fn(*args, **kwargs)
    return _mark(disabled, "disable" if recursive else "disable_frame")


def mark_static(t, index=None):
    """Marks dims of `t` static. dynoc specializes every dim already, so this
    only records the request (as torch._dynamo.mark_static does)."""
    dims = range(t.dim()) if index is None else ([index] if isinstance(index, int) else index)
    t._dynoc_static_dims = set(getattr(t, "_dynoc_static_dims", set())) | set(dims)


def mark_dynamic(t, index, **kwargs):
    """Marks dims of `t` dynamic. dynoc makes a dim dynamic when a second call
    brings another size and the same graphs (automatic dynamic shapes, see
    docs/capture.md); the mark is recorded for that, not required by it."""
    dims = [index] if isinstance(index, int) else list(index)
    t._dynoc_dynamic_dims = set(getattr(t, "_dynoc_dynamic_dims", set())) | set(dims)


def reset():
    _session.current().graphs.clear()
