"""dynoc's user-facing entry points, named as torch.compile's and
torch._dynamo's (dynoc/__init__.py re-exports them): compile and optimize
make capture regions; the rest mark functions and tensors, or act on the
regions made so far."""
import functools
import sys
import warnings

import torch

from . import _backends, _region
from .jit.compiled_module import CompiledModule
from ._routing import route_torch_entry_points


class config:
    """Settings, named as in torch._dynamo.config. cache_size_limit=None:
    the installed torch's default (torch._dynamo.config.recompile_limit, 8 in
    torch 2.13), read at the first recompile."""
    cache_size_limit = None


def __getattr__(name):
    if name == "Unsupported":  # made on first use (_errors.unsupported_type)
        return unsupported_type()
    raise AttributeError(f"module 'dynoc' has no attribute '{name}'")


_MODES = (None, "default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")
_said = set()


def _say_once(key, message):
    if key not in _said:
        _said.add(key)
        warnings.warn(message, stacklevel=3)


def compile(model=None, *, fullgraph=False, dynamic=None, backend="inductor", mode=None,
            options=None, disable=False, guard_fail_fn=None, guard_export_fn=None):
    """Like torch.compile. Under `dynoc capture`: records `model` as a capture
    region (the script runs as written). In a plain process: a call's first
    run captures, the graph is built (cached on disk) and later calls whose
    guards pass run the built code (docs/capture.md, "In the same process")."""
    if model is None:
        return lambda m: compile(m, fullgraph=fullgraph, dynamic=dynamic, backend=backend,
                                 mode=mode, options=options, disable=disable,
                                 guard_fail_fn=guard_fail_fn, guard_export_fn=guard_export_fn)
    if disable:
        return model
    if isinstance(backend, str) and backend not in _backends.BACKENDS:
        raise ValueError(f"dynoc: unknown backend '{backend}' (known: {', '.join(_backends.BACKENDS)})")
    if not isinstance(backend, str) and not callable(backend):
        raise TypeError(f"dynoc: backend must be a name or a callable, got "
                        f"{type(backend).__name__}")
    if mode is not None and options is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be "
                           "specified at the same time.")  # torch.compile's words
    if mode not in _MODES:
        # Inductor's own check: its error for a mode it lacks, as torch.compile
        # raises it; a mode it has and dynoc does not know builds as default.
        from torch._inductor import list_mode_options
        list_mode_options(mode)
        _say_once(mode, f"dynoc: mode='{mode}' is an Inductor mode dynoc has no "
                        "counterpart of; the code is built as in the default mode")
    backend = _backends.ALIASES.get(backend, backend) if isinstance(backend, str) else backend
    if mode == "reduce-overhead":
        _say_once(mode, "dynoc: mode='reduce-overhead' replays CUDA graphs for --target=cuda "
                        "models; CPU code runs as in the default mode")
    elif mode and mode.startswith("max-autotune"):
        _say_once(mode, f"dynoc: mode='{mode}': dynoc does not autotune; the code is built "
                        "as in the default mode")
    if options:
        # torch.compile's own check, in its words: a key Inductor's config
        # lacks is an error, not an option to ignore.
        from torch._inductor import config as inductor_config
        known = inductor_config.get_config_copy()
        for key in options:
            if key.replace("-", "_") not in known:
                raise RuntimeError(f"Unexpected optimization option {key}, known options "
                                   f"are {list(known.keys())}")
        _say_once(("options",) + tuple(sorted(options)),
                  f"dynoc: compile options {sorted(options)} are Inductor's and have no "
                  "meaning for dynoc's compiler; ignored")
    _region.config = config
    region = _region.Region(model, backend, fullgraph, dynamic,
                            guard_fail_fn=guard_fail_fn, guard_export_fn=guard_export_fn,
                            cuda_graphs=mode == "reduce-overhead")
    if isinstance(model, torch.nn.Module):
        return CompiledModule(model, region)
    if callable(model) and not hasattr(model, "forward"):
        functools.update_wrapper(region, model, updated=())
    return region


def optimize(backend="inductor", *, nopython=False, dynamic=None, disable=False,
             guard_fail_fn=None, guard_export_fn=None):
    """Like torch._dynamo.optimize: a decorator making a capture region.
    guard_fail_fn is called with a GuardFail(reason, orig_code) when a call
    fails the guards of every variant; guard_export_fn with the guard texts
    of each new variant."""
    return lambda fn: compile(fn, backend=backend, fullgraph=nopython, dynamic=dynamic, disable=disable,
                              guard_fail_fn=guard_fail_fn, guard_export_fn=guard_export_fn)


def optimize_assert(backend="inductor", *, dynamic=None):
    """Like torch._dynamo.optimize_assert: optimize(nopython=True)."""
    return optimize(backend, nopython=True, dynamic=dynamic)


def is_compiling():
    """True while dynoc's evaluator runs a capture region (as torch.compiler.
    is_compiling is while Dynamo traces), and while a captured variant's body
    runs eagerly in place of its compiled code (Dynamo's compiled code has
    the calls folded as True)."""
    return _region.capturing > 0 or _region.standing_in > 0


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
    """Marks dims of `t` static (all of them with index=None): a variant in
    which such a dim is dynamic does not take `t`, and no recompile makes it
    dynamic (docs/capture.md, "Dynamic shapes"). The mark is torch's own
    attribute, so torch._dynamo.mark_static's marks count too."""
    dims = range(t.dim()) if index is None else ([index] if isinstance(index, int) else index)
    t._dynamo_static_indices = set(getattr(t, "_dynamo_static_indices", set())) | set(dims)


def mark_dynamic(t, index, **kwargs):
    """Marks dims of `t` dynamic: the first capture with `t` makes them
    dynamic at once. If the captured code pins such a dim (a branch on its
    size), the call raises ConstraintViolationError, as Dynamo's does; dims
    of size 0 and 1 stay static. Calling it inside a region is an error
    (AssertionError, as in Dynamo)."""
    dims = [index] if isinstance(index, int) else list(index)
    t._dynamo_dynamic_indices = set(getattr(t, "_dynamo_dynamic_indices", set())) | set(dims)


_mark(mark_dynamic, "forbid")


def reset():
    """Forgets every region's variants and compiled code (the next call
    captures again), as torch._dynamo.reset() forgets its caches; graphs a
    `dynoc capture` session recorded are kept for its output. A variant
    that runs eagerly again after it is told again."""
    for region in list(_region._regions):
        region.forget()
    _region.forget_eager_warnings()


def run(fn=None):
    """Like torch._dynamo.run: `fn` (a compiled function or module) runs the
    code compiled so far for calls whose guards pass, and eagerly otherwise;
    it never captures."""
    if fn is None:
        return run
    if isinstance(fn, CompiledModule):
        fn = fn._dynoc_region
    if not isinstance(fn, _region.Region):
        return fn

    @functools.wraps(fn.target if callable(fn.target) else run)
    def cached_only(*args, **kwargs):
        _region.run_only += 1
        try:
            return fn(*args, **kwargs)
        finally:
            _region.run_only -= 1
    return cached_only


def install():
    """Makes torch.compile, torch.compiler's and torch._dynamo's entry points
    route to dynoc in this process (DYNOC_TORCH_COMPILE=1 does it at start-up),
    as `dynoc capture` does."""
    route_torch_entry_points(sys.modules[__package__])
