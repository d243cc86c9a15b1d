"""Sizes of computed tensors as expressions of the region's input sizes.

A decision on the size of a tensor the region computed (`y = cat([x, x]);
if y.size(0) > 4`) is recorded against the graph value that holds it
(`___v[12].size()[0] > 4`). While a variant is static its tensor guards imply
it. When dims turn dynamic, the graphs are replayed on fake tensors whose
dynamic dims are symbols (torch's meta kernels as the shape oracle), which
gives the value's size as an expression of the inputs' sizes; an affine one
becomes the variant's symbolic guard (`L['x'].size()[0] * 2 > 4`). Anything
else (a floor division, a data-dependent size, a replay that pins a dynamic dim
to its value) raises Unresolved and the variant stays static.
"""
import ast

import torch

from .graph import Value
from .guards import is_size_input

_OPS = {ast.Lt: "<", ast.LtE: "<=", ast.Eq: "==", ast.NotEq: "!=", ast.Gt: ">", ast.GtE: ">="}


class Unresolved(Exception):
    """Why a size guard cannot be expressed in the inputs' sizes."""


def needs_resolution(text):
    """Whether a size guard names computed tensors or element counts, which
    only a replay can express in the inputs' sizes."""
    return "___v[" in text or ".numel()" in text


class Resolved:
    """A size guard in the inputs' sizes: `text`, and as data
    sum(terms[(source, dim)] * size) + constant OP 0."""

    def __init__(self, text, terms, constant, op):
        self.text, self.terms, self.constant, self.op = text, terms, constant, op

    def holds(self, sizes):
        """Whether the guard holds for inputs of `sizes` ({source: shape})."""
        x = self.constant + sum(c * sizes[s][d] for (s, d), c in self.terms.items())
        return {"<": x < 0, "<=": x <= 0, "==": x == 0, "!=": x != 0, ">": x > 0,
                ">=": x >= 0}[self.op]


def _fake_input(mode, ctx_types, v, shape, dims):
    DimDynamic, Context = ctx_types
    meta = torch.empty(shape, dtype=v.dtype, device="meta")
    kinds = [DimDynamic.DYNAMIC if d in dims else DimDynamic.STATIC for d in range(len(shape))]
    return mode.from_tensor(meta, symbolic_context=Context(dynamic_sizes=kinds))


def substitute(obj, env, map_int, error):
    """A replayable call's `obj` with Values as their replay tensors (`env`,
    by vid), ints through `map_int` and devices as 'meta'; `error`: the
    exception for a tensor the graph does not know."""
    if isinstance(obj, Value):
        return env[obj.vid]
    if isinstance(obj, torch.Tensor):
        raise error("an operand is a tensor the graph does not know")
    if isinstance(obj, bool):
        return obj
    if isinstance(obj, int):
        return map_int(obj)
    if isinstance(obj, torch.device):
        return torch.device("meta")
    if isinstance(obj, (list, tuple)):
        return type(obj)([substitute(x, env, map_int, error) for x in obj])
    if isinstance(obj, dict):
        return {k: (torch.device("meta") if k == "device" else
                    substitute(v, env, map_int, error)) for k, v in obj.items()}
    return obj


def _substitute(obj, env, pending):
    """`obj` with the sizes Python passed (`pending`: (value, symbolic size)
    in the order passed; consumed) in place of the ints they were, matched
    in order, so that a literal that happens to equal a size stays one."""
    def map_int(i):
        return pending.pop(0)[1] if pending and pending[0][0] == i else i
    return substitute(obj, env, map_int, Unresolved)


def _size_term(node, tensors):
    """The size a size-source node names, from `tensors` (source text ->
    fake tensor: a dict or a _Tensors), or raises Unresolved."""
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_size_term(node.operand, tensors)
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult)):
        a, b = _size_term(node.left, tensors), _size_term(node.right, tensors)
        return a + b if isinstance(node.op, ast.Add) else a - b \
            if isinstance(node.op, ast.Sub) else a * b
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) \
            and isinstance(node.value, ast.Call) and not node.value.args \
            and isinstance(node.value.func, ast.Attribute) and node.value.func.attr == "size":
        t = tensors.get(ast.unparse(node.value.func.value))
        if t is not None and 0 <= node.slice.value < t.dim():
            return t.shape[node.slice.value]
    if isinstance(node, ast.Call) and not node.args and isinstance(node.func, ast.Attribute) \
            and node.func.attr == "numel":
        t = tensors.get(ast.unparse(node.func.value))
        if t is not None:
            return t.numel()
    raise Unresolved(f"{ast.unparse(node)} names no tensor of the graphs")


def _affine(value, symbols):
    """({(source, dim): coefficient}, constant) of a SymInt or int affine in
    `symbols` ({sympy symbol: (source, dim)}), or raises Unresolved."""
    import sympy
    if isinstance(value, int):
        return {}, value
    expr = sympy.expand(value.node.expr)
    unknown = expr.free_symbols - set(symbols)
    if unknown:
        raise Unresolved(f"the size {expr} depends on more than the inputs' sizes")
    gens = sorted(expr.free_symbols, key=str)
    if not gens:
        return {}, int(expr)
    try:
        poly = sympy.Poly(expr, *gens)
    except sympy.PolynomialError:
        raise Unresolved(f"the size {expr} is not affine in the inputs' sizes")
    terms, constant = {}, 0
    for powers, c in poly.as_dict().items():
        if sum(powers) > 1 or not c.is_Integer:
            raise Unresolved(f"the size {expr} is not affine in the inputs' sizes")
        if sum(powers) == 0:
            constant = int(c)
        else:
            terms[symbols[gens[powers.index(1)]]] = int(c)
    return terms, constant


def _text(terms, constant):
    parts = []
    for (src, d), c in sorted(terms.items()):
        size = f"{src}.size()[{d}]"
        mag = size if abs(c) == 1 else f"{size} * {abs(c)}"
        parts.append(("- " if c < 0 else "+ ") + mag if parts else ("-" if c < 0 else "") + mag)
    if constant or not parts:
        parts.append(f"{'-' if constant < 0 else '+'} {abs(constant)}" if parts else str(constant))
    return " ".join(parts)


def _replay(graphs, sizes, dims, calls):
    """Replays `graphs` (in order, every recorded node) on fake tensors whose
    dims `dims` ({source: dims}) are symbols. Returns the fake tensors by
    source text (`L['x']`, `___v[12]`) and {symbol: (source, dim)}."""
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.fx.experimental.symbolic_shapes import (DimDynamic, ShapeEnv,
                                                       StatelessSymbolicContext)
    shape_env = ShapeEnv(duck_shape=False)
    mode = FakeTensorMode(shape_env=shape_env, allow_non_fake_inputs=False)
    types = (DimDynamic, StatelessSymbolicContext)
    env, tensors, symbols = {}, {}, {}
    pinned_by = []
    by_name = {g.name: g for g in graphs}
    for g in graphs:
        for v in g.inputs:
            if v.kind == "user" and v.name in sizes:
                if v.name not in tensors:
                    want = set(dims.get(v.name, ()))
                    fake = _fake_input(mode, types, v, sizes[v.name], want)
                    tensors[v.name] = fake
                    for d in want:
                        if not isinstance(fake.shape[d], torch.SymInt):
                            # sizes 0 and 1 are specialized (as in Dynamo)
                            raise Unresolved(f"{v.name}.size()[{d}] is {fake.shape[d]} in "
                                             f"this run (sizes 0 and 1 stay static)")
                        symbols[fake.shape[d].node.expr] = (v.name, d)
                env[v.vid] = tensors[v.name]
            elif v.kind == "user" and is_size_input(v.name):  # a number: no shape
                env[v.vid] = _fake_input(mode, types, v, (), ())
            elif v.kind == "user":
                graph, sep, index = v.name.rpartition(".output_")
                made = by_name.get(graph) if sep else None
                if made is None:
                    raise Unresolved(f"the graphs take {v.name}, a value made at a break")
                env[v.vid] = env[made.outputs[int(index)].vid]
            else:
                env[v.vid] = _fake_input(mode, types, v, v.shape, ())
        for n in g.recorded_nodes or g.nodes:
            call = calls.get(n, n.call)
            if call is None:
                raise Unresolved(f"{n.op} cannot be replayed")
            for v in n.operands:
                # A weight only dead nodes used is no longer a graph input
                # (a wrapper that ignores BERT's pooler output, say).
                if v.vid not in env and v.kind not in (None, "user"):
                    env[v.vid] = _fake_input(mode, types, v, v.shape, ())
            if callable(call):  # sizes as expressions of the input dims
                call = call(lambda src, d: tensors[src].shape[d])
            func, args, kwargs = call
            known = []  # (value, its symbolic size), in the order Python passed them
            for value, src in (() if n in calls else n.sizes):
                if src == "<opaque>":
                    if any(k.rstrip("_") in ("size", "shape") for k in n.attrs):
                        raise Unresolved(f"{n.op} takes sizes from Python code the "
                                         f"evaluator did not follow")
                    continue
                try:
                    known.append((value, _size_term(ast.parse(src, mode="eval").body,
                                                    _Tensors(tensors, env))))
                except SyntaxError:
                    raise Unresolved(f"{n.op} takes a size whose origin is not tracked")
            try:
                with mode:
                    pending = list(known)
                    out = func(*_substitute(args, env, pending),
                               **_substitute(kwargs, env, pending))
            except Unresolved:
                raise
            except Exception as e:
                raise Unresolved(f"{n.op} does not replay with symbolic sizes "
                                 f"({type(e).__name__})")
            outs = out if isinstance(out, (tuple, list)) else (out,)
            for o, r in zip(outs, n.results):
                env[r.vid] = o
            if not pinned_by and any(s in symbols and e.is_number
                                     for s, e in shape_env.replacements.items()):
                pinned_by.append(n)  # the first op that pinned a symbol: for the reason
    pinned = [symbols[s] for s, e in shape_env.replacements.items()
              if s in symbols and e.is_number]
    if pinned_by:
        pinned = _Pinned(pinned, pinned_by[0])
    return _Tensors(tensors, env), symbols, pinned


class _Pinned(list):
    """The (source, dim)s a replay pinned, with `node`, the op that first did."""

    def __init__(self, items, node):
        super().__init__(items)
        self.node = node


def _attr_text(node):
    """A node's attributes, short, for a reason."""
    text = ", ".join(f"{k} = {v}" for k, v in sorted(node.attrs.items()))
    return f"{{{text[:160]}}}"


class _Tensors:
    """Fake tensors by source text: inputs (`L['x']`) and graph values
    (`___v[12]`)."""

    def __init__(self, inputs, env):
        self.inputs, self.env = inputs, env

    def get(self, text):
        if text.startswith("___v[") and text.endswith("]") and text[5:-1].isdigit():
            return self.env.get(int(text[5:-1]))
        return self.inputs.get(text)


def _replay_outside_modes(graphs, sizes, dims, calls=None):
    from torch.utils._python_dispatch import _disable_current_modes
    with _disable_current_modes():  # a recorder of an enclosing region
        return _replay(graphs, sizes, dims, calls or {})


def pinned_dims(graphs, sizes, dims):
    """The dims among `dims` ({source: dims}) that the graphs only run at
    their captured size (a matmul's contracted dim against a weight), as
    {source: dims}. Raises Unresolved when the graphs do not replay."""
    out = {}
    for src, d in _replay_outside_modes(graphs, sizes, dims)[2]:
        out.setdefault(src, set()).add(d)
    return out


def resolve(graphs, texts, sizes, dims, calls=None):
    """The size guards `texts` (comparisons of sizes of graph values, inputs
    and element counts) as Resolved guards in the input sizes, with `dims`
    ({source: dims}) symbolic and every other size as in `sizes` ({source:
    shape}, the run the graphs were captured on); `calls` ({node: call})
    replaces some nodes' recorded calls. Raises Unresolved."""
    if not texts:
        return []
    tensors, symbols, pinned = _replay_outside_modes(graphs, sizes, dims, calls)
    if pinned:
        src, d = pinned[0]
        raise Unresolved(f"the graphs pin {src}.size()[{d}] to its value")
    out = []
    for text in texts:
        node = ast.parse(text, mode="eval").body
        if not isinstance(node, ast.Compare) or len(node.ops) != 1 or \
                type(node.ops[0]) not in _OPS:
            raise Unresolved(f"{text} is not a comparison of sizes")
        lhs = _affine(_size_term(node.left, tensors), symbols)
        rhs = _affine(_size_term(node.comparators[0], tensors), symbols)
        terms = dict(lhs[0])
        for key, c in rhs[0].items():
            terms[key] = terms.get(key, 0) - c
        terms = {k: c for k, c in terms.items() if c}
        op = _OPS[type(node.ops[0])]
        if not terms:
            continue  # decided by static sizes alone: the tensor guards imply it
        out.append(Resolved(f"{_text(*lhs)} {op} {_text(*rhs)}", terms,
                            lhs[1] - rhs[1], op))
    return out


def check_shapes(old, new, sizes, dims, calls):
    """Whether a replay of graph `old` with `dims` symbolic gives every value
    the shape it had in both runs: `old`'s own, and that of the same value in
    `new` (the same graph at other sizes). `sizes`: the two runs' input
    shapes ({source: shape} each). The reason it does not, or None."""
    import sympy
    try:
        tensors, symbols, pinned = _replay_outside_modes([old], sizes[0], dims, calls)
    except Unresolved as e:
        return str(e)
    if pinned:
        src, d = pinned[0]
        node = getattr(pinned, "node", None)
        where = f" (at {node.op} {_attr_text(node)})" if node is not None else ""
        return f"the graph pins {src}.size()[{d}] to its value{where}"
    values = [{sym: sizes[i][src][d] for sym, (src, d) in symbols.items()} for i in (0, 1)]
    na, nb = old.recorded_nodes or old.nodes, new.recorded_nodes or new.nodes
    if len(na) != len(nb):
        na, nb = old.nodes, new.nodes
    # A result nothing reads (an attention kernel's logsumexp outside
    # training, whose recorded shape is the GPU kernel's own) is not checked.
    read = {o.vid for n in old.nodes for o in n.operands} | {v.vid for v in old.outputs}
    for x, y in zip(na, nb):
        for rx, ry in zip(x.results, y.results):
            fake = tensors.get(f"___v[{rx.vid}]")
            if fake is None or rx.vid not in read:
                continue
            for i, want in ((0, rx.shape), (1, ry.shape)):
                got = [int(sympy.sympify(d.node.expr if isinstance(d, torch.SymInt) else d)
                           .subs(values[i])) for d in fake.shape]
                if got != [w for w in want]:
                    return f"{x.op} gives {got} where the run had {list(want)}"
    return None
