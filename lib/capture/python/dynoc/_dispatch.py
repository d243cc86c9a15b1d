"""A region's fast dispatcher: the per-call path of a compiled region, made
into one generated function (docs/capture.md, "In the same process").

The general path (_region.Region._call) resolves the target, binds the call's
arguments with defaults and closure variables into L, then tries each
variant's guards. For the common call (positional arguments only, every
parameter given, no closure variables) all of that is known when the
variants are: the dispatcher builds L as a dict literal of its parameters,
tries the variants in order and calls the first one whose guards pass. It
returns MISS whenever the general path must decide (no variant passes, the
passing variant runs eagerly, a tensor constant went stale), so what a call
does is the same on both paths; only the time differs.
"""
import inspect
import types

import torch

from . import _jit

MISS = object()  # the general path decides this call
_NO_HOOKS = "___hook_ids(L['self']) == ()"


def make(region):
    """(the dispatcher, the number of positional arguments it takes) for
    `region`'s variants as they are now, or None when its calls need the
    general path."""
    t = region.target
    if type(t) is types.FunctionType:
        fn, bound = t, ()
    elif isinstance(t, torch.nn.Module) and inspect.isfunction(type(t).forward):
        fn, bound = type(t).forward, (t,)
    else:
        return None
    code = fn.__code__
    if code.co_freevars or code.co_kwonlyargcount or \
            code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS):
        return None
    if not any(c is not None for c in region.compiled):
        return None
    names = code.co_varnames[:code.co_argcount]
    if len(names) < len(bound):
        return None
    scope = {"___MISS": MISS, "___STALE": _jit.STALE, "G": fn.__globals__,
             "___stale": lambda i: _forget_stale(region, i)}
    params = [f"___a{k}" for k in range(len(bound), len(names))]
    for k, value in enumerate(bound):
        scope[f"___a{k}"] = value
    lines = [f"def ___dispatch({', '.join(params)}):",
             "    L = {" + ", ".join(f"{n!r}: ___a{k}" for k, n in enumerate(names)) + "}"]
    for i, guards in enumerate(region.variants):
        compiled = region.compiled[i] if i < len(region.compiled) else None
        if bound and not any(g["text"] == _NO_HOOKS for g in guards):
            # Hooks ran around this variant's capture; the general path runs
            # them. It also decides every call this variant could take.
            lines.append("    return ___MISS")
            break
        scope[f"___check{i}"] = region._check(i)
        lines.append(f"    if ___check{i}(L, G):")
        if compiled is None:
            lines.append("        return ___MISS")  # runs eagerly: the general path
            continue
        scope[f"___variant{i}"] = compiled
        lines += [f"        r = ___variant{i}(L, G)",
                  f"        return ___stale({i}) if r is ___STALE else r"]
    else:
        lines.append("    return ___MISS")
    exec("\n".join(lines), scope)  # noqa: S102 - dynoc's own source
    return scope["___dispatch"], len(params)


def _forget_stale(region, i):
    """A variant whose tensor constant changed runs eagerly from now on, as
    the general path decides (it runs this call)."""
    region.compiled[i] = None
    region.invalidate_dispatch()
    return MISS
