"""Evaluates guard texts against a region's arguments.

Guards are written in Dynamo's readable style and they are also the check: a guard
text is a Python expression over L (the region's arguments) and G (its globals).
"""
import ast
import sys
import weakref

import torch
from torch.utils.hooks import RemovableHandle

from . import optim_rules as _optim_rules


def _match(actual, want):
    """Sizes or strides against a guard's; None in the guard: a dynamic dim."""
    return len(actual) == len(want) and all(w is None or a == w for a, w in zip(actual, want))


def static_marks(t):
    """The dims of `t` marked static (mark_static, torch's or dynoc's)."""
    return set(getattr(t, "_dynamo_static_indices", ()))


def check_tensor(t, dtype, device, requires_grad, size, stride):
    # Checked on every call of a region: the cheapest reads first
    # (`t.device` makes a torch.device object; `is_cpu`/`is_cuda` do not).
    if not isinstance(t, _Tensor) or t.dtype != dtype or t.requires_grad != requires_grad or \
            not (t.is_cpu if device == "cpu" else t.is_cuda if device == "cuda"
                 else t.device.type == device):
        return False
    if None in size:
        return _match(t.shape, size) and _match(t.stride(), stride) and \
            not _marked_static(t, size)
    # (the guard texts write sizes and strides as lists)
    return list(t.shape) == list(size) and (list(t.stride()) == list(stride)
                                            if None not in stride else _match(t.stride(), stride))


_Tensor = torch.Tensor


def _marked_static(t, size):
    """A dim the variant has dynamic that the caller marked static: the
    variant does not take `t` (Dynamo recompiles for it too)."""
    marks = getattr(t, "_dynamo_static_indices", None)
    return bool(marks) and any(size[d] is None for d in marks if 0 <= d < len(size))


# hook_ids is in every module region's guards; walking every submodule on
# each call costs tens of microseconds on a transformer. Every registration
# takes an id from torch's RemovableHandle counter, and every removal goes
# through RemovableHandle.remove (counted here), so a result is reused while
# neither moved.
_removals = [0]
_hook_cache = {}  # id(module) -> (weakref to it, (next_id, removals), ids)


def _count_removals():
    original = RemovableHandle.remove
    if getattr(original, "_dynoc_counted", False):
        return

    def remove(self):
        _removals[0] += 1
        return original(self)
    remove._dynoc_counted = True
    RemovableHandle.remove = remove


_count_removals()


def hook_ids(module):
    """The ids of every forward and backward (pre-)hook registered on `module`,
    its submodules, or globally, sorted. Each registration takes a new id, so
    registering or removing a hook changes this."""
    generation = (RemovableHandle.next_id, _removals[0])
    hit = _hook_cache.get(id(module))
    if hit is not None and hit[1] == generation and hit[0]() is module:
        return hit[2]
    ids = _walk_hook_ids(module)
    try:
        _hook_cache[id(module)] = (weakref.ref(module), generation, ids)
    except TypeError:
        pass
    return ids


def _walk_hook_ids(module):
    mm = torch.nn.modules.module
    ids = [k for d in (mm._global_forward_hooks, mm._global_forward_pre_hooks,
                       mm._global_backward_hooks, mm._global_backward_pre_hooks) for k in d]
    for m in module.modules():
        for d in (m._forward_hooks, m._forward_pre_hooks, m._backward_hooks,
                  m._backward_pre_hooks):
            ids.extend(d)
    return tuple(sorted(ids))


def module_globals(name):
    """The globals of module `name`: guards on globals a followed call read
    in another module (`___G('pkg.mod')['flag']`)."""
    return sys.modules[name].__dict__


def type_id(obj):
    """The identity of `obj`'s type (a match statement's type guard)."""
    return id(type(obj))


def value_guard_text(source, value):
    """The guard that `source` still holds `value` (None, a bool, int, float or
    str, or a subclass such as an enum member), as an expression eval() can
    run: subclasses are written as their base type's literal (a str or int
    enum compares equal to its value), infinities as float('inf') and NaN as
    `x != x`, since NaN equals nothing."""
    if isinstance(value, float):
        if value != value:
            return f"{source} != {source}"
        if value in (float("inf"), float("-inf")):
            return f"{source} == float('{value}')"
        return f"{source} == {float.__repr__(value)}"
    for base in (bool, int, str):
        if isinstance(value, base):
            return f"{source} == {base.__repr__(value)}"
    return f"{source} == {value!r}"


def optimizer_state(opt):
    """What an optimizer's step records depends on (docs/training.md): each
    parameter group's hyperparameters (baked into the update graph as
    constants) and, per parameter, which state it holds (SGD's momentum buffer
    appears at the first step) and its `step` count (Adam's bias corrections
    are Python floats computed from it). A text, so guards compare it."""
    skip_hyper, skip_state = ("params",), ()
    if _optim_rules.applies(opt):  # the rule makes these tensor inputs
        ruled_hyper, skip_state = _optim_rules.ruled_keys(opt)
        skip_hyper += ruled_hyper
    groups = []
    for group in opt.param_groups:
        hyper = sorted((k, v) for k, v in group.items()
                       if k not in skip_hyper and isinstance(v, (bool, int, float, str, tuple)))
        state = []
        for p in group["params"]:
            s = opt.state.get(p, {})
            step = s.get("step") if "step" not in skip_state else None
            if isinstance(step, torch.Tensor):
                step = step.item()
            state.append((tuple(sorted(s)), step))
        groups.append((hyper, state))
    return repr(groups)


# The capture extension's check_tensor and attr (guard_check.cpp): the same
# check and lookup without Python frames; set when the extension is
# initialized.
native_check_tensor = None
native_attr = None


def _scope():
    return {"torch": torch, "check_tensor": native_check_tensor or check_tensor,
            "___is_grad_enabled": torch.is_grad_enabled, "___hook_ids": hook_ids,
            "___type_id": type_id, "___G": module_globals,
            "___optimizer_state": optimizer_state}


def is_size_source(source):
    """Does `source` name a tensor's size (`L['x'].size()[0]`, a computed
    tensor's `___v[3].size()[1]`, `.numel()`) of a tensor the recording
    knows (not one made outside the graphs)?"""
    return (".size()[" in source or ".numel()" in source) and "<" not in source


def is_size_input(name):
    """Is graph input `name` a size the code used as a number (`x +
    L['c'].size()[0]`, capture/recorder.py), not a tensor? Its source reads
    only the region's arguments and globals: no computed tensor's size."""
    return (".size()[" in name or ".numel()" in name) and "___v[" not in name \
        and "<" not in name


def input_expr(name, device=None):
    """The expression that makes graph input `name` from L and G: the
    tensor its source names, or a size input as a 0-d int64 tensor (on
    `device`, a model's)."""
    if not is_size_input(name):
        return name
    where = f", device={str(device)!r}" if device is not None else ""
    return f"torch.tensor({name}{where})"


def compile_source(exprs):
    """A function of (L, G) returning the tuple of `exprs` (Python source
    over the region's arguments L and globals G)."""
    body = "(" + "".join(f"{e}, " for e in exprs) + ")"
    return eval(f"lambda L, G: {body}", _scope())  # noqa: S307 - dynoc's own sources


def compile_check(guards):
    """One function of (L, G) that is True when every guard passes: the
    texts compiled once, for the per-call check of a region's variants
    (first_failure finds which one failed, when one did). An attribute path
    that several guards read (`L['self'].bn1` in `.eps`, `.momentum`, ...,
    each an nn.Module.__getattr__ call) is read once into a local."""
    if not guards:
        return lambda L, G: True
    scope = _scope()
    exec(_check_source([g["text"] for g in guards], scope), scope)  # noqa: S102 - dynoc's own
    return scope["___check"]


def _chain_key(node):
    """The source of an attribute/subscript path from L or G (`L['self'].bn1`),
    or None when `node` is not one."""
    n = node
    while isinstance(n, (ast.Attribute, ast.Subscript)):
        if isinstance(n, ast.Subscript) and not isinstance(n.slice, ast.Constant):
            return None
        n = n.value
    if isinstance(n, ast.Name) and n.id in ("L", "G") and isinstance(node, ast.Attribute):
        return ast.unparse(node)
    return None


_TENSOR_ARGS = ("device", "requires_grad", "size", "stride")


def _chain_root(node):
    """The name an attribute/subscript path starts from (`L`, `G`, a hoisted
    `___pN`), looking through attr() calls; None for anything else."""
    n = node
    while True:
        if isinstance(n, (ast.Attribute, ast.Subscript)):
            n = n.value
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and \
                n.func.id == "___attr" and n.args:
            n = n.args[0]
        else:
            break
    return n.id if isinstance(n, ast.Name) else None


class _ModuleAttrs(ast.NodeTransformer):
    """`L['self'].bn1.eps` -> `___attr(___attr(L['self'], 'bn1'), 'eps')`:
    a submodule or buffer read through nn.Module.__getattr__ costs a raised
    and caught AttributeError and a Python call; attr() finds it directly
    (the same object, or the same error)."""

    def visit_Attribute(self, node):
        node = self.generic_visit(node)
        root = _chain_root(node.value)
        if not isinstance(node.ctx, ast.Load) or not (
                root in ("L", "G") or (root or "").startswith("___p")):
            return node
        return ast.Call(ast.Name("___attr", ast.Load()),
                        [node.value, ast.Constant(node.attr)], [])


class _Literals(ast.NodeTransformer):
    """Makes a guard cheaper to run every call: a literal list or tuple of
    constants (a tensor guard's sizes) becomes a name bound once in `scope`,
    and check_tensor's keyword arguments positional."""

    def __init__(self, scope):
        self.scope = scope

    def visit_List(self, node):
        return self._constant(node, list)

    def visit_Tuple(self, node):
        return self._constant(node, tuple)

    def _constant(self, node, kind):
        if not all(isinstance(e, ast.Constant) for e in node.elts) or \
                not isinstance(node.ctx, ast.Load):
            return self.generic_visit(node)
        name = f"___k{len(self.scope)}"
        self.scope[name] = kind(e.value for e in node.elts)
        return ast.Name(name, ast.Load())

    def visit_Call(self, node):
        node = self.generic_visit(node)
        if isinstance(node.func, ast.Name) and node.func.id == "check_tensor" and \
                [k.arg for k in node.keywords] == list(_TENSOR_ARGS) and len(node.args) == 2:
            node.args += [k.value for k in node.keywords]
            node.keywords = []
        return node


def _check_source(texts, scope=None):
    """The source of `___check(L, G)`: each guard in turn (False at the first
    that fails or raises), with paths read more than once hoisted into locals
    just before the first guard that reads them. With `scope`, literal lists
    and tuples are bound there once (_Literals)."""
    trees = [ast.parse(t, mode="eval").body for t in texts]
    if scope is not None:
        trees = [_Literals(scope).visit(t) for t in trees]
    counts = {}
    for tree in trees:
        for n in ast.walk(tree):
            key = _chain_key(n)
            if key is not None:
                counts[key] = counts.get(key, 0) + 1
    names = {}
    fast_attrs = scope is not None and native_attr is not None
    if fast_attrs:
        scope["___attr"] = native_attr

    def attrs(tree):
        return _ModuleAttrs().visit(tree) if fast_attrs else tree

    class Hoist(ast.NodeTransformer):
        def visit(self, node):
            key = _chain_key(node)
            if key in names:
                return ast.Name(names[key], ast.Load())
            return self.generic_visit(node)

    lines = ["def ___check(L, G):", "    try:"]
    for tree in trees:
        wanted = sorted({(ast.unparse(n).count(".") + ast.unparse(n).count("["), _chain_key(n))
                         for n in ast.walk(tree)
                         if _chain_key(n) is not None and counts[_chain_key(n)] > 1
                         and _chain_key(n) not in names})
        for _, key in wanted:
            rhs = attrs(Hoist().visit(ast.parse(key, mode="eval").body))
            names[key] = f"___p{len(names)}"
            lines.append(f"        {names[key]} = {ast.unparse(rhs)}")
        lines.append(f"        if not ({ast.unparse(attrs(Hoist().visit(tree)))}):")
        lines.append("            return False")
    lines += ["        return True", "    except Exception:", "        return False"]
    return "\n".join(lines)


def first_failure(guards, L, G):
    """Returns the text of the first guard that fails (or cannot be evaluated),
    or None when all pass."""
    scope = {"L": L, "G": G, **_scope()}
    for g in guards:
        try:
            ok = eval(g["text"], scope)  # noqa: S307 - texts are dynoc's own guards
        except Exception:
            ok = False
        if not ok:
            return g["text"]
    return None


_OPS = {ast.Lt: "<", ast.LtE: "<=", ast.Eq: "==", ast.NotEq: "!=", ast.Gt: ">", ast.GtE: ">="}


def _affine(node, inputs):
    """{(input, dim): coefficient} and a constant for an expression of sizes
    (`L['x'].size()[0] * 2 - 1`), or None when it is not affine in them."""
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return {}, node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _affine(node.operand, inputs)
        return inner and ({k: -c for k, c in inner[0].items()}, -inner[1])
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) \
            and isinstance(node.value, ast.Call) and not node.value.args \
            and isinstance(node.value.func, ast.Attribute) and node.value.func.attr == "size":
        tensor = inputs.get(ast.unparse(node.value.func.value))
        return None if tensor is None else ({(tensor, node.slice.value): 1}, 0)
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult)):
        a, b = _affine(node.left, inputs), _affine(node.right, inputs)
        if a is None or b is None:
            return None
        if isinstance(node.op, ast.Mult):
            if a[0] and b[0]:
                return None
            (terms, k), scale = (a, b[1]) if a[0] else (b, a[1])
            return {key: c * scale for key, c in terms.items()}, k * scale
        sign = 1 if isinstance(node.op, ast.Add) else -1
        terms = dict(a[0])
        for key, c in b[0].items():
            terms[key] = terms.get(key, 0) + sign * c
        return terms, a[1] + sign * b[1]
    return None


def size_guard_fields(text, inputs):
    """A size guard in the form the runtime checks: `sum(coefficient *
    size(input, dim)) + constant OP 0`, as {"terms": [input, dim, coefficient,
    ...], "constant": int, "op": str}. `inputs` maps a tensor guard's source to
    its graph input. None when the guard names a tensor that is not an input
    of the graph, or is not affine in sizes."""
    try:
        node = ast.parse(text, mode="eval").body
    except SyntaxError:
        return None
    if not isinstance(node, ast.Compare) or len(node.ops) != 1 or type(node.ops[0]) not in _OPS:
        return None
    inputs = {ast.unparse(ast.parse(src, mode="eval").body): i for src, i in inputs.items()}
    lhs, rhs = _affine(node.left, inputs), _affine(node.comparators[0], inputs)
    if lhs is None or rhs is None:
        return None
    terms = dict(lhs[0])
    for key, c in rhs[0].items():
        terms[key] = terms.get(key, 0) - c
    flat = [x for (i, d), c in sorted(terms.items()) if c for x in (i, d, c)]
    return {"terms": flat, "constant": lhs[1] - rhs[1], "op": _OPS[type(node.ops[0])]}
