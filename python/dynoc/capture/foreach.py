"""`torch._foreach_*` ops recorded as the per-tensor ops they stand for.

Optimizers as torch ships them (`foreach=True`, the default on GPUs),
`clip_grad_norm_` and `GradScaler` call the foreach ops: one call over a list
of tensors (`_foreach_add_.Scalar(params, 1.0)`, `_foreach_norm.Scalar(grads,
2.0)`). A graph holds tensors, not lists of them, so the recorder runs each
such call as its per-tensor op on each element (`add_.Scalar(params[i],
1.0)`), which is what torch's own slow path computes and what Inductor lowers
them to. A list argument gives its i-th element to the i-th call; any other
argument goes to every call as it is.
"""
import torch

import functools

# The per-tensor overloads to try for each foreach overload, in order.
_OVERLOADS = {
    "default": ("default",),
    "Scalar": ("Scalar", "default"),
    "ScalarList": ("Scalar", "default"),
    "List": ("Tensor", "default"),
    "Tensor": ("Tensor", "default"),
    "ScalarAndTensor": ("Scalar", "default"),
}
# Per-tensor ops whose name differs from the foreach op's.
_RENAMED = {"norm": "linalg_vector_norm"}
# `_foreach_addcdiv(_).Tensor` / `addcmul`: `scalars` is a tensor holding one
# scalar per element (what torch's optimizers pass while compiling, from
# `_stack_if_compiling`), where the per-tensor op takes a number. Recorded as
# the per-tensor op's arithmetic, with the element as a 0-d tensor:
# self + (t1 * scalars[i]) / t2 (or * t2), in ATen's kernel order.
_SCALED_BY_TENSOR = {"addcdiv": torch.div, "addcmul": torch.mul}


def _fits(given, wanted):
    return given == wanted or wanted == f"Optional[{given}]"


def _plan(func, op):
    """How the foreach call's arguments become `op`'s: per argument of
    `func`, (per element?, op's argument name, keyword?), or None where one
    has no place in `op` (then `op` is not the per-tensor op)."""
    params = op._schema.arguments
    plan = []
    for i, a in enumerate(func._schema.arguments):
        t = str(a.type)
        each = t.startswith("List[")
        t = t[5:-1] if each else t
        # by position (passed by name where the op takes it so), else by name
        if not a.kwarg_only and i < len(params) and _fits(t, str(params[i].type)):
            p = params[i]
        else:
            p = next((q for q in params if q.name == a.name and _fits(t, str(q.type))), None)
            if p is None:
                return None
        plan.append((a.name, each, p.name, p.kwarg_only or params.index(p) != i))
    return plan


@functools.lru_cache(maxsize=None)
def per_tensor(func):
    """(the per-tensor op of foreach op `func`, how its arguments map), or
    None when `func` is no foreach op or has none (it then runs as it is)."""
    name = func._schema.name
    if not name.startswith("aten::_foreach_"):
        return None
    base = name[len("aten::_foreach_"):]
    if func._overloadname == "Tensor" and base.rstrip("_") in _SCALED_BY_TENSOR:
        return _SCALED_BY_TENSOR[base.rstrip("_")], base.endswith("_")
    packet = getattr(torch.ops.aten, _RENAMED.get(base, base), None)
    copy_into = False
    if packet is None and base.endswith("_"):
        # No in-place per-tensor op (`maximum_`, Adamax's): the functional
        # one, its result copied into the list's tensor.
        packet, copy_into = getattr(torch.ops.aten, base[:-1], None), True
    if packet is None:
        return None
    for overload in _OVERLOADS.get(func._overloadname or "default", ()):
        op = getattr(packet, overload, None)
        plan = _plan(func, op) if op is not None else None
        if plan is not None:
            return op, plan, copy_into
    return None


def run(func, per, args, kwargs):
    """Calls the per-tensor op (`per`, from per_tensor) on each element of
    the foreach call's lists; returns what the foreach op returns (a list of
    results, or None for an in-place one)."""
    op, plan = per[0], per[1]
    if isinstance(plan, bool):  # _SCALED_BY_TENSOR's; plan: in place
        self, t1, t2, scalars = args
        terms = [op(a * scalars[i], b) for i, (a, b) in enumerate(zip(t1, t2))]
        if plan:
            for x, term in zip(self, terms):
                x.add_(term)
            return None
        return [x + term for x, term in zip(self, terms)]
    given = {}
    for (name, _, _, _), value in zip(plan, args):
        given[name] = value
    given.update(kwargs)
    count = next(len(given[n]) for n, each, _, _ in plan if each and n in given)
    results = []
    for i in range(count):
        positional, named = [], {}
        for name, each, to, keyword in plan:
            if name not in given:
                continue
            value = given[name][i] if each else given[name]
            if keyword:
                named[to] = value
            else:
                positional.append(value)
        result = op(*positional, **named)
        if per[2]:  # an in-place foreach op recorded as op + copy_
            given[plan[0][0]][i].copy_(result)
        results.append(result)
    return results if func._schema.returns else None
