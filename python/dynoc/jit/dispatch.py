"""A region's fast dispatcher: the per-call path of a compiled region, run
in C (docs/capture.md, "The call path").

The general path (_region.Region._call) resolves the target, binds the call's
arguments with defaults and closure variables into L, then tries each
variant's guards. For the common call (positional arguments only, every
parameter given, no closure variables) all of that is known when the
variants are: _dynoc_C.Dispatcher (lib/capture/dispatcher.cpp) takes the
arguments, runs each variant's guards as a program of checks planned here
from their texts, and calls the first variant whose guards pass. Guards of
a form it has no check for stay Python (compiled once, given L and G). It
returns MISS whenever the general path must decide (no variant passes, the
passing variant runs eagerly, a tensor constant went stale), so what a call
does is the same on both paths; only the time differs.
"""
import ast
import inspect
import types

import torch
from torch.utils.hooks import RemovableHandle

from . import built as _built
from .. import _native
from ..capture import guards as _guards

MISS = object()  # the general path decides this call
_CONSTANT_TYPES = (bool, int, float, str, type(None))


def make(region):
    """The dispatcher of `region`'s variants as they are now, or None when
    its calls need the general path."""
    t = region.target
    if type(t) is types.FunctionType:
        fn, bound = t, ()
    elif isinstance(t, torch.nn.Module) and inspect.isfunction(type(t).forward):
        fn, bound = type(t).forward, (t,)
    else:
        return None
    code = fn.__code__
    binding = _binding(fn)
    if binding is None or not any(c is not None for c in region.compiled):
        return None
    names, binding = binding
    if binding[0] < len(bound) and not binding[2]:
        return None
    if bound and not names:
        return None
    # The module's source in L: its parameter, or the first of *args (a
    # wrapper's); a variant captured without hooks has this guard. (A
    # function of no parameters has no module to look at.)
    source = None if not names else \
        f"L[{names[0]!r}]" if binding[0] else f"L[{names[0]!r}][0]"
    no_hooks = f"___hook_ids({source}) == ()"
    variants = []
    for i, guards in enumerate(region.variants):
        if bound and not any(g["text"] == no_hooks for g in guards):
            # Hooks ran around this variant's capture; the general path runs
            # them. It also decides every call this variant could take.
            variants.append(None)
            break
        ops, rest = plan([g["text"] for g in guards], names)
        residual = _guards.compile_check([{"text": t} for t in rest]) if rest else None
        compiled = region.compiled[i] if i < len(region.compiled) else None
        direct = compiled.direct(names) if hasattr(compiled, "direct") else None
        variants.append((ops, residual, compiled, direct))
    dispatcher = _native.ext().Dispatcher(
        tuple(names), bound, fn.__globals__, variants, MISS, _built.STALE,
        lambda i: _forget_stale(region, i), binding)
    return dispatcher


def _binding(fn):
    """(L's keys in slot order, the Dispatcher's binding) for calls of `fn`
    with positional arguments only, as _region._locals binds them: the
    positional parameters (defaults for those left out), *args, keyword-only
    parameters (each with a default, else None: the general path's), **kwargs
    and the closure's free variables."""
    code = fn.__code__
    npos, nkw = code.co_argcount, code.co_kwonlyargcount
    names = list(code.co_varnames[:npos])
    varargs = bool(code.co_flags & inspect.CO_VARARGS)
    varkw = bool(code.co_flags & inspect.CO_VARKEYWORDS)
    if varargs:
        names.append(code.co_varnames[npos + nkw])
    kwonly_names = code.co_varnames[npos:npos + nkw]
    kwdefaults = fn.__kwdefaults__ or {}
    if any(n not in kwdefaults for n in kwonly_names):
        return None
    names += kwonly_names
    if varkw:
        names.append(code.co_varnames[npos + nkw + varargs])
    cells = tuple(fn.__closure__ or ())
    names += code.co_freevars
    # A free variable named as a parameter is the parameter's value in L.
    if len(set(names)) != len(names):
        return None
    return names, (npos, tuple(fn.__defaults__ or ()), varargs,
                   tuple(kwdefaults[n] for n in kwonly_names), varkw, cells)


def plan(texts, names):
    """(ops, the texts left to Python): the guard `texts` of a function whose
    L has the keys `names` as the checks of _dynoc_C.Dispatcher
    (dispatcher.cpp lists them). A path several guards read is loaded once."""
    slots = {f"L[{n!r}]": k for k, n in enumerate(names)}
    ops, rest = [], []

    def slot(path):
        """The slot of an attribute path, loading its prefixes as needed."""
        key = ast.unparse(path)
        if key not in slots:
            if isinstance(path, ast.Attribute):
                ops.append(("attr", slot(path.value), path.attr))
            else:
                ops.append(("item", slot(path.value), path.slice.value))
            slots[key] = len(slots)
        return slots[key]

    for text in texts:
        op = _op(ast.parse(text, mode="eval").body, lambda p: p is not None and _is_path(p, slots))
        if op is None:
            rest.append(text)
            continue
        kind, path, *fields = op
        ops.append((kind, *(() if path is None else (slot(path),)), *fields))
    return ops, rest


def _is_path(node, slots):
    """Is `node` L['name'] or an attribute/constant-subscript path from one?"""
    while ast.unparse(node) not in slots:
        if isinstance(node, ast.Attribute):
            node = node.value
        elif isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and \
                type(node.slice.value) in (int, str):
            node = node.value
        else:
            return False
    return True


def _constant(node):
    """(True, value) for a literal constant or a torch dtype (`torch.float32`)
    the checks compare against, else (False, None)."""
    if isinstance(node, ast.Constant) and type(node.value) in _CONSTANT_TYPES:
        return True, node.value
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and \
            node.value.id == "torch" and isinstance(getattr(torch, node.attr, None), torch.dtype):
        return True, getattr(torch, node.attr)
    return False, None


def _op(node, is_path):
    """(kind, path or None, fields...) for a guard the dispatcher checks in C,
    or None."""
    if isinstance(node, ast.Call):
        return _tensor_op(node, is_path)
    if not isinstance(node, ast.Compare) or len(node.ops) != 1:
        return None
    left, op, right = node.left, type(node.ops[0]), node.comparators[0]
    if op is ast.Eq and isinstance(left, ast.Call) and not left.keywords:
        func = ast.unparse(left.func)
        if func == "len" and len(left.args) == 1 and is_path(left.args[0]) and \
                isinstance(right, ast.Constant) and type(right.value) is int:
            return ("len_eq", left.args[0], right.value)
        if func == "sorted" and len(left.args) == 1 and is_path(left.args[0]) and \
                isinstance(right, ast.List) and not right.elts:
            return ("len_eq", left.args[0], 0)
        if func == "___hook_ids" and len(left.args) == 1 and is_path(left.args[0]) and \
                isinstance(right, ast.Tuple) and not right.elts:
            return ("no_hooks", left.args[0], _guards.hook_ids, RemovableHandle,
                    _guards._removals)
        known, value = _constant(right)
        if known and not left.args and func in ("___is_grad_enabled", "torch.is_grad_enabled"):
            return ("call_eq", None, torch.is_grad_enabled, value)
        if known and not left.args and func == "torch.get_default_dtype":
            return ("call_eq", None, torch.get_default_dtype, value)
        return None
    kinds = {ast.Eq: "eq", ast.Is: "is", ast.IsNot: "is_not"}
    known, value = _constant(right)
    if op in kinds and known and is_path(left):
        return (kinds[op], left, value)
    return None


def _tensor_op(node, is_path):
    """check_tensor(path, torch.<dtype>, device=..., requires_grad=...,
    size=[...], stride=[...]) as a "tensor" op, or None."""
    if not (isinstance(node.func, ast.Name) and node.func.id == "check_tensor") or \
            len(node.args) != 2 or not is_path(node.args[0]):
        return None
    known, dtype = _constant(node.args[1])
    kw = {k.arg: k.value for k in node.keywords}
    if not known or not isinstance(dtype, torch.dtype) or \
            sorted(kw) != sorted(("device", "requires_grad", "size", "stride")):
        return None
    try:
        device, grad, size, stride = (ast.literal_eval(kw[k]) for k in
                                      ("device", "requires_grad", "size", "stride"))
    except ValueError:
        return None
    if not isinstance(device, str) or not isinstance(grad, bool) or \
            not isinstance(size, (list, tuple)) or not isinstance(stride, (list, tuple)) or \
            not all(d is None or type(d) is int and 0 <= d < 2 ** 63 for d in (*size, *stride)):
        return None  # the general check says what it makes of these
    return ("tensor", node.args[0], dtype, device, grad, tuple(size), tuple(stride))


def _forget_stale(region, i):
    """A variant whose tensor constant changed runs eagerly from now on, as
    the general path decides (it runs this call)."""
    region.compiled[i] = None
    region.invalidate_dispatch()
    return MISS
