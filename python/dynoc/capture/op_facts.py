"""What the recorder knows about ATen ops (a leaf): the calls that make a
Python value or mark the profiler, the in-place ops and their functional
twins, the ops whose running statistics change though their schema says not,
each op's argument types, the in-place metadata ops and their view ops, the
ops ATen defines only by their decomposition, and where as_strided's view is
one of the graph's values.
"""
import re

import torch

# ATen calls that turn a tensor into a Python value: the value leaves the graph.
# Profiler markers (optimizers' record_function): they compute nothing and
# neither break a graph nor enter one.
_MARKERS = {"_record_function_enter", "_record_function_enter_new",
            "_record_function_exit"}
_ESCAPES = {"aten::_local_scalar_dense": "Tensor.item() (or int/float/bool of a tensor) makes a Python number",
            "aten::equal": "torch.equal makes a Python bool"}


def _running_stats(func, args, kwargs):
    """For native_batch_norm in training mode with running statistics:
    ((input, momentum), (running_mean, running_var)); else None."""
    if func is not torch.ops.aten.native_batch_norm.default:
        return None
    names = [a.name for a in func._schema.arguments]
    bound = dict(zip(names, args), **kwargs)
    rm, rv = bound.get("running_mean"), bound.get("running_var")
    if not bound.get("training") or rm is None or rv is None:
        return None
    return (bound["input"], float(bound["momentum"])), (rm, rv)


def _op_name(func):
    name = func._schema.name.split("::", 1)[1]
    return f"aten.{name}" + ("" if func._overloadname == "default" else f".{func._overloadname}")



def _is_tensor_list_type(t):
    return t.startswith("Tensor") and "[]" in t


_ARG_TYPES = {}


# In-place ops whose functional twin has another name or overload name than
# dropping the underscore gives (the fills of module constructors, dropout's
# bernoulli_): same arguments after self, the result replaces self.
_FUNCTIONAL_TWINS = {
    ("bernoulli_", "float"): ("bernoulli", "p"),
    ("bernoulli_", "Tensor"): ("bernoulli", "Tensor"),
    ("normal_", "default"): ("normal_functional", "default"),
    ("uniform_", "default"): ("uniform", "default"),
    ("zero_", "default"): ("zero", "default"),
    ("exponential_", "default"): ("exponential", "default"),
}


def _functional_variant(func):
    """The out-of-place overload of an in-place ATen op (add_.Tensor ->
    add.Tensor, bernoulli_.float -> bernoulli.p), or None."""
    schema = func._schema
    name = schema.name.split("::", 1)[1]
    first = schema.arguments[0] if schema.arguments else None
    if not name.endswith("_") or first is None or first.alias_info is None \
            or not first.alias_info.is_write:
        return None
    twin_name, twin_overload = _FUNCTIONAL_TWINS.get(
        (name, func._overloadname), (name[:-1], func._overloadname))
    packet = getattr(torch.ops.aten, twin_name, None)
    return getattr(packet, twin_overload, None) if packet is not None else None


def _arg_types(func):
    """The argument types of `func` as native_functions.yaml spells them
    ("Tensor?", "int[]", "ScalarType"); the Python schema objects lose
    ScalarType and Scalar. Cached per overload."""
    types = _ARG_TYPES.get(func)
    if types is None:
        text = str(func._schema)
        inner = text[text.index("(") + 1:text.rindex(") ->")]
        parts, depth, cur = [], 0, ""
        for ch in inner:
            depth += ch in "([" and 1 or (ch in ")]" and -1 or 0)
            if ch == "," and depth == 0:
                parts.append(cur.strip())
                cur = ""
            else:
                cur += ch
        parts.append(cur.strip())
        types = [re.sub(r"\([^)]*\)", "", p.rpartition(" ")[0]).strip()
                 for p in parts if p and p != "*"]
        _ARG_TYPES[func] = types
    return types


_inplace_views = None


def _INPLACE_VIEWS():
    """{in-place metadata op: the view op it applies to its tensor}."""
    global _inplace_views
    if _inplace_views is None:
        aten = torch.ops.aten
        _inplace_views = {
            aten.t_.default: aten.t.default,
            aten.transpose_.default: aten.transpose.int,
            aten.squeeze_.default: aten.squeeze.default,
            aten.squeeze_.dim: aten.squeeze.dim,
            aten.squeeze_.dims: aten.squeeze.dims,
            aten.unsqueeze_.default: aten.unsqueeze.default,
            aten.as_strided_.default: aten.as_strided.default,
        }
    return _inplace_views


_COMPOSITE = {}  # OpOverload -> whether it is CompositeImplicitAutograd


def _composite(func):
    """Is `func` an op that ATen defines only by its decomposition (its one
    kernel is CompositeImplicitAutograd, as linear's; not silu_backward,
    which also has CPU and CUDA kernels that run below the recorder)?"""
    known = _COMPOSITE.get(func)
    if known is None:
        has = torch._C._dispatch_has_kernel_for_dispatch_key
        name = func.name()
        known = _COMPOSITE[func] = has(name, "CompositeImplicitAutograd") and not any(
            has(name, key) for key in ("CPU", "CUDA", "CompositeExplicitAutograd", "Meta"))
    return known


def as_strided_unreadable(args, kwargs):
    """Why as_strided(self, size, stride, storage_offset) cannot be recorded, or
    None: it addresses self's storage, a graph value holds self's elements in
    their dense layout, so the two agree only where self is contiguous from
    the start of its storage and every element the view reads is one of its."""
    names = ("self", "size", "stride", "storage_offset")
    bound = dict(zip(names, args), **kwargs)
    x, size, stride = bound["self"], bound["size"], bound["stride"]
    offset = bound.get("storage_offset")
    offset = x.storage_offset() if offset is None else offset
    if not x.is_contiguous() or x.storage_offset() != 0:
        return ("as_strided of a tensor that is not contiguous from the start of its "
                "storage (it addresses storage, not elements)")
    if any(n == 0 for n in size):
        return None
    first = offset + sum((n - 1) * s for n, s in zip(size, stride) if s < 0)
    last = offset + sum((n - 1) * s for n, s in zip(size, stride) if s > 0)
    if first < 0 or last >= x.numel():
        return (f"as_strided reads storage elements {first} to {last} of a tensor of "
                f"{x.numel()} elements")
    return None
