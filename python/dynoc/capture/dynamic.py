"""Automatic dynamic shapes.

When a region recompiles only because tensor sizes changed, and the new capture
made the same graphs as an earlier variant (same ops, attributes and wiring; every
Python value the region read equal), the two merge into one variant whose differing
dims are dynamic: `None` in guards (`size=[None, 16]`), `?` in the graphs' types.
This is what Dynamo's `dynamic=None` does on a recompile. The second capture is the
shape oracle: a dim is dynamic exactly where the two real runs differ.

Sizes that Python reads keep their origin (`L['x'].size()[0]`, see
lib/capture/size_sources.cpp): a comparison on them is a size guard
(`L['x'].size()[0] > 4`) that both runs must have decided alike, and becomes the
merged variant's symbolic guard. A size given to a reshape or expand makes its
attribute differ between the runs; the merged attribute takes -1 where the
result dim is dynamic, when that is what the op means (one inferred reshape dim;
an expand dim that keeps the input's size). Any other difference, or a size
Python used as a plain value (`range(b)`, `x[:b]`), keeps the variants apart.
"""
import json
import re

import torch

from . import guards as _guards, symbolic as _symbolic
from . import mlir_writer as mw
from .graph import Value


def _dims(a, b):
    return [x if x == y else None for x, y in zip(a, b)]


def guard_text(g):
    return (f"check_tensor({g['source']}, {g['dtype']}, device='{g['device']}', "
            f"requires_grad={g['requires_grad']}, size={g['sizes']}, stride={g['strides']})")


def merge_guards(old, new):
    """The merged guard list of two variants, or None when they differ in more
    than tensor sizes and strides."""
    if len(old) != len(new):
        return None
    merged = []
    for g, h in zip(old, new):
        if g["kind"] != h["kind"]:
            return None
        if g["kind"] != "tensor_match":
            if g["text"] != h["text"]:
                return None
            merged.append(g)
            continue
        key = ("source", "dtype", "device", "requires_grad")
        if any(g[k] != h[k] for k in key) or len(g["sizes"]) != len(h["sizes"]):
            return None
        m = dict(g, sizes=_dims(g["sizes"], h["sizes"]), strides=_dims(g["strides"], h["strides"]))
        m["text"] = guard_text(m)
        merged.append(m)
    return merged


def dynamic_dims(guards):
    """{source: [dim, ...]} of the dynamic dims in a guard list."""
    return {g["source"]: [d for d, s in enumerate(g["sizes"]) if s is None]
            for g in guards if g["kind"] == "tensor_match" and None in g["sizes"]}


def _input_key(v, weights):
    """A graph input as the comparison sees it: constants by value (their names
    are session-unique, so two variants never share one), the rest by name."""
    if v.kind == "constant" and v.name in weights:
        t = weights[v.name]
        return (v.kind, str(t.dtype), tuple(t.shape), t.contiguous().view(-1).tolist()
                if t.numel() <= 4096 else hash(t.numpy().tobytes()))
    return (v.kind, v.name, str(v.dtype), len(v.shape))


# Ops whose size attribute a size that Python read may have set (`x.view(b, -1)`):
# attribute name, and how a dynamic result dim is spelled there.
_SIZED = {"aten.view": "size", "aten._unsafe_view": "size", "aten.reshape": "shape",
          "aten.expand": "size"}
# Tensor factories: their size is every dim of the result (no -1 to infer one);
# a merge writes it as expressions of the input dims (a position bias's
# `torch.zeros(1, heads, q, key_length)`). Position of the size argument.
_FACTORIES = {"aten.zeros": 0, "aten.ones": 0, "aten.full": 0, "aten.new_zeros": 1,
              "aten.new_ones": 1, "aten.new_full": 1}
_SIZED.update({op: "size" for op in _FACTORIES})


def _with_size(node, args, kwargs, size):
    """The call arguments of reshape/expand/factory `node` with `size` as
    its size."""
    pos = _FACTORIES.get(node.op, 1)
    if len(args) > pos:
        return args[:pos] + (size,) + args[pos + 1:], kwargs
    return args, dict(kwargs, **{_SIZED[node.op]: size})


def _ints(attr):
    """The ints of an `array<i64: ...>` attribute text."""
    body = attr.partition(":")[2].rstrip(">").strip()
    return [int(x) for x in body.split(",")] if body else []


def _sized_attr(a, b):
    """The size attribute of node `a` (a _SIZED op; `b` the same node of the
    other run, shapes not merged yet) made dynamic where the two results
    differ: a reshape's one dynamic dim is -1 (inferred from the element
    count); an expand's is -1 where both runs keep the input's own size. None
    when the attribute cannot say it."""
    if a.op in _FACTORIES:
        return None  # no dim to infer: written as expressions (_fit_entries)
    key = _SIZED[a.op]
    x, y = _ints(a.attrs[key]), _ints(b.attrs[key])
    res_a, res_b = a.results[0].shape, b.results[0].shape
    merged = _dims(res_a, res_b)
    if len(x) != len(y) or len(x) != len(merged):
        return None
    if a.op != "aten.expand":
        if sum(d is None for d in merged) > 1:
            return None
        return [-1 if d is None else d for d in merged]
    in_a, in_b = a.operands[0].shape, b.operands[0].shape
    lead = len(merged) - len(in_a)
    out = []
    for d, (u, v) in enumerate(zip(x, y)):
        if merged[d] is not None and u == v:
            out.append(u)
        elif merged[d] is None and d >= lead and in_a[d - lead] == res_a[d] \
                and in_b[d - lead] == res_b[d]:
            out.append(-1)
        else:
            return None
    return out


# Int attributes a merge may write as expressions of the input dims (the
# runs' values fitted, dynoc.sym_sizes) when they differ between the runs.
_FITTED = {"aten.arange": ("end",), "aten.slice.Tensor": ("start", "end")}


# A reshape or expand whose size the Python code spelled as exactly another
# tensor's dims (`t.expand(b, n)` with `b, n = ids.shape`) is the same op
# against that tensor: `aten.expand_as(t, ids)`. That form holds any number of
# dynamic dims, where the size attribute holds one -1 at most.
_AS_FORM = {"aten.expand": "aten.expand_as", "aten.view": "aten.view_as",
            "aten._unsafe_view": "aten.view_as"}


def _as_operand(node, graph):
    """The Value of `graph` whose dims the size attribute of `node` spells,
    one after the other, all from the Python code; or None."""
    if node.op not in _AS_FORM:
        return None
    ints = _ints(node.attrs[_SIZED[node.op]])
    if len(node.sizes) != len(ints) or not ints:
        return None
    tensor = None
    for d, ((value, src), want) in enumerate(zip(node.sizes, ints)):
        head, sep, tail = src.rpartition(".size()[")
        if value != want or not sep or tail != f"{d}]" or tensor not in (None, head):
            return None
        tensor = head
    if tensor.startswith("___v[") and tensor.endswith("]"):
        vid = int(tensor[5:-1])
        found = [r for n in (graph.recorded_nodes or graph.nodes) for r in n.results
                 if r.vid == vid]
    else:
        found = [v for v in graph.inputs if v.kind == "user" and v.name == tensor]
    if not found or len(found[0].shape) != len(ints):
        return None
    return found[0]


def _rewrite_as(node, operand):
    """Rewrites the reshape/expand `node` as its `_as` form against `operand`."""
    aten = torch.ops.aten
    node.op = _AS_FORM[node.op]
    node.attrs = {}  # the size (and expand's `implicit`) is the operand now
    node.operands = [node.operands[0], operand]
    func = aten.expand_as.default if node.op == "aten.expand_as" else aten.view_as.default
    node.call = (func, (node.call[1][0], operand), {})
    node.sizes = ()


def _signature(graph, weights):
    """Everything about a graph but its tensors' sizes, with values numbered."""
    ids = {}
    for v in graph.inputs:
        ids[v.vid] = len(ids)
    nodes = []
    for n in graph.nodes:
        for r in n.results:
            ids[r.vid] = len(ids)
        attrs = sorted((k, v) for k, v in n.attrs.items()
                       if _SIZED.get(n.op) != k and k not in _FITTED.get(n.op, ()))
        nodes.append((n.op, [ids.get(o.vid) for o in n.operands], attrs,
                      n.segment_sizes, [(str(r.dtype), len(r.shape)) for r in n.results]))
    structure = json.dumps(graph.output_structure, sort_keys=True).replace(graph.name, "<self>")
    return ([_input_key(v, weights) for v in graph.inputs], nodes,
            [ids.get(v.vid) for v in graph.outputs], graph.mutations, structure)


def _values(graph):
    return list(graph.inputs) + [r for n in graph.nodes for r in n.results]


def _difference(a, b, weights):
    """Why graphs `a` and `b` are not the same computation (the first
    difference), or None."""
    sa, sb = _signature(a, weights), _signature(b, weights)
    if sa == sb:
        return None
    if sa[0] != sb[0]:
        i = next(i for i, (x, y) in enumerate(zip(sa[0], sb[0])) if x != y) \
            if len(sa[0]) == len(sb[0]) else None
        return "their inputs differ" if i is None else \
            f"input {i} differs ({a.inputs[i].name})"
    if len(sa[1]) != len(sb[1]):
        return f"{len(sa[1])} vs {len(sb[1])} ops"
    for na, x, y in zip(a.nodes, sa[1], sb[1]):
        if x != y:
            what = "attributes" if x[2] != y[2] else "operands" if x[1] != y[1] else "results"
            return f"{na.op} differs in its {what}"
    return "their outputs differ"


def plan_merge(old, new, weights):
    """How the graphs `old` (an earlier variant's) become dynamic where `new`
    (the same region at other sizes) differs: (None, plan, assumed), plan a
    list of (node of old, node of new, change), a change ("dims", merged size)
    or ("as", operand in old, operand in new) for the `_as` form, assumed the
    guard texts of input dims taken as equal (_fit); or (why, None, []) when
    the graphs are not the same computation."""
    if len(old) != len(new):
        return f"{len(old)} vs {len(new)} graphs", None, []
    for a, b in zip(old, new):
        why = _difference(a, b, weights)
        if why:
            return f"{a.name}: {why}", None, []
    plan, assumed = [], []
    for a, b in zip(old, new):
        for na, nb in zip(a.nodes, b.nodes):
            for key in _FITTED.get(na.op, ()):
                if na.attrs.get(key) == nb.attrs.get(key):
                    continue
                syms = _dynamic_input_dims(a, b)
                u, v = _attr_ints(na.attrs.get(key, "")), _attr_ints(nb.attrs.get(key, ""))
                entry = _fit(u[0], v[0], syms, _size_sources(na, nb), assumed) \
                    if syms and len(u) == len(v) == 1 else None
                if entry is None:
                    return (f"{na.op}'s {key} differs ({na.attrs.get(key)} vs "
                            f"{nb.attrs.get(key)}) in a way the input dims do not explain"), \
                        None, []
                plan.append((na, nb, ("symattr", key, entry, syms)))
            if na.op in _SIZED and na.attrs[_SIZED[na.op]] != nb.attrs[_SIZED[na.op]]:
                dims = _sized_attr(na, nb)
                if dims is not None:
                    plan.append((na, nb, ("dims", dims)))
                    continue
                operands = _as_operand(na, a), _as_operand(nb, b)
                if None not in operands:
                    plan.append((na, nb, ("as",) + operands))
                    continue
                entries = _fit_entries(na, nb, a, b, assumed)
                if entries is None:
                    return (f"{na.op}'s size attribute cannot say the dynamic dims "
                            f"({na.attrs[_SIZED[na.op]]} vs {nb.attrs[_SIZED[na.op]]})"), \
                        None, []
                plan.append((na, nb, ("sym", entries, _dynamic_input_dims(a, b))))
    if any(change[0] in ("sym", "symattr") for _, _, change in plan):
        why = _check_fit(old, new, plan)
        if why:
            return f"sizes written as expressions of the input dims do not hold: {why}", \
                None, []
    return None, plan, assumed


def _dynamic_input_dims(a, b):
    """[(source, dim, old size, new size)] of the user input dims of graph
    `a` that differ in `b`, in argument order: the symbols of a merged
    graph's dynoc.sym_sizes."""
    out = []
    for va, vb in zip(a.inputs, b.inputs):
        if len(va.shape) != len(vb.shape):
            return None
        for d, (u, v) in enumerate(zip(va.shape, vb.shape)):
            if u is None or v is None:
                return None  # dynamic already: the runs' sizes are not known
            if u != v:
                if va.kind != "user":
                    return None
                out.append((va.name, d, u, v))
    return out


def _fit_entries(na, nb, a, b, assumed):
    """The size of reshape/expand `na` (graph `a`; `nb` the same node of `b`)
    as entries the runs' input dims explain: an int where both runs agree,
    ("dim", k) for the k-th dynamic input dim, ("prod", k, l) for a product of
    two, at most one -1 (a reshape's element count gives it). None when an
    entry has no one explanation."""
    syms = _dynamic_input_dims(a, b)
    if not syms:
        return None
    x, y = _ints(na.attrs[_SIZED[na.op]]), _ints(nb.attrs[_SIZED[nb.op]])
    if len(x) != len(y):
        return None
    entries, inferred = [], False
    aligned = len(na.sizes) == len(nb.sizes) == len(x)
    for k, (u, v) in enumerate(zip(x, y)):
        if u == v:
            entries.append(u)
            continue
        fit = _fit(u, v, syms, _size_sources(na, nb, k if aligned else None), assumed)
        if fit is not None:
            entries.append(fit)
        elif not inferred and na.op != "aten.expand" and na.op not in _FACTORIES:
            entries.append(-1)
            inferred = True
        else:
            return None
    return entries


def _size_sources(na, nb, k=None):
    """The sources of the sizes the Python call behind a node passed (entry
    `k` only, where given), in both runs: what it read them from."""
    texts = set()
    for node in (na, nb):
        sizes = node.sizes if k is None else node.sizes[k:k + 1]
        texts.update(src for _, src in sizes)
    return texts


def _dim_text(sym):
    return f"{sym[0]}.size()[{sym[1]}]"


def _fit(u, v, syms, sources=(), assumed=None):
    """The one expression of the dynamic input dims `syms` that is `u` in the
    old run and `v` in the new: ("dim", k), else ("add", k, offset), else
    ("prod", k, m); None when
    none or several are. Several input dims that changed alike (token ids and
    their attention mask) are told apart by `sources`, the size texts the
    Python call was given (`(L['input_ids'].size()[1] + 0)`): the dim it
    read. Where nothing tells them apart (a size library code computed), the
    first is taken and its equality with the others is appended to `assumed`
    as guard texts: a call where they differ recompiles."""
    fits = [("dim", k) for k, (_, _, p, q) in enumerate(syms) if (p, q) == (u, v)]
    if not fits:
        # A dim plus an offset both runs share (a key length: the cache's
        # length + 1), from dims that changed alike; the merged graph's
        # symbolic replay (_check_fit) checks it against the ops' shapes.
        adds = [("add", k, u - p) for k, (_, _, p, q) in enumerate(syms)
                if u - p == v - q and u != v]
        if adds and len({syms[f[1]][2:] for f in adds}) == 1:
            fits = adds
    if len(fits) > 1 and sources:
        read = [f for f in fits if any(_dim_text(syms[f[1]]) in t for t in sources)]
        if len(read) == 1:
            return read[0]
    if len(fits) > 1 and assumed is not None:
        first = _dim_text(syms[fits[0][1]])
        for f in fits[1:]:
            text = f"{first} == {_dim_text(syms[f[1]])}"
            if text not in assumed:
                assumed.append(text)
        return fits[0]
    if not fits:
        fits = [("prod", k, m) for k in range(len(syms)) for m in range(k, len(syms))
                if (syms[k][2] * syms[m][2], syms[k][3] * syms[m][3]) == (u, v)]
    return fits[0] if len(fits) == 1 else None


def _entry_value(e, syms, dim):
    if isinstance(e, int):
        return e
    if e[0] == "dim":
        return dim(*syms[e[1]][:2])
    if e[0] == "add":
        return dim(*syms[e[1]][:2]) + e[2]
    return dim(*syms[e[1]][:2]) * dim(*syms[e[2]][:2])


def _attr_call(node, key, entry, syms):
    """The node's call with int argument `key` as a SymInt expression of the
    input dims (for the replays): a function of `dim(source, d)`."""
    func, args, kwargs = node.call
    names = [a.name for a in func._schema.arguments]

    def build(dim):
        value = _entry_value(entry, syms, dim)
        i = names.index(key) if key in names else len(args)
        if i < len(args):
            return func, tuple(value if j == i else x for j, x in enumerate(args)), kwargs
        return func, args, dict(kwargs, **{key: value})
    return build


def _entry_call(node, entries, syms):
    """The node's call with its size as SymInt expressions of the input dims
    (for the symbolic replay): a function of `dim(source, d)`."""
    func, args, kwargs = node.call

    def build(dim):
        size = [_entry_value(e, syms, dim) for e in entries]
        return (func,) + _with_size(node, tuple(args), kwargs, size)
    return build


def _check_fit(old, new, plan):
    """Replays the old graph with its dynamic dims symbolic and the planned
    sizes: every value must get the shapes both runs had. The reason when not."""
    if len(old) != 1:
        return "the region made more than one graph"
    a, b = old[0], new[0]
    syms = _dynamic_input_dims(a, b)
    calls = {}
    for na, nb, change in plan:
        calls[na] = _changed_call(na, change, 0)
    sizes = [{v.name: list(v.shape) for v in g.inputs if v.kind == "user"} for g in (a, b)]
    dims = {}
    for src, d, _, _ in syms:
        dims.setdefault(src, set()).add(d)
    return _symbolic.check_shapes(a, b, sizes, dims, calls)


def _add_sym_size(node, key, text):
    """Adds `key = text` to the node's dynoc.sym_sizes dictionary."""
    old = node.attrs.get("dynoc.sym_sizes")
    node.attrs["dynoc.sym_sizes"] =         f"{old[:-1]}, {key} = {text}}}" if old else f"{{{key} = {text}}}"


def _sym_sizes_attr(entries, syms):
    """The dynoc.sym_sizes text of planned entries."""
    names = [f"s{k}" for k in range(len(syms))]
    out = []
    for e in entries:
        if isinstance(e, int):
            out.append(str(e))
        elif e[0] == "dim":
            out.append(names[e[1]])
        elif e[0] == "add":
            out.append(f"{names[e[1]]} + {e[2]}" if e[2] >= 0 else f"{names[e[1]]} - {-e[2]}")
        else:
            out.append(f"{names[e[1]]} * {names[e[2]]}")
    return f"affine_map<()[{', '.join(names)}] -> ({', '.join(out)})>"


def _changed_call(node, change, side):
    """The replayable call of `node` (of the old graphs, side 0, or the new,
    side 1) with a planned change made."""
    if change[0] == "sym":
        return _entry_call(node, change[1], change[2])
    if change[0] == "symattr":
        return _attr_call(node, change[1], change[2], change[3])
    func, args, kwargs = node.call
    if change[0] == "dims":
        return (func,) + _with_size(node, tuple(args), kwargs, list(change[1]))
    aten = torch.ops.aten
    as_func = aten.expand_as.default if node.op == "aten.expand" else aten.view_as.default
    return as_func, (args[0], change[1 + side]), {}


def planned_calls(plan):
    """{node: call} of both graphs' nodes as the plan changes them: what a
    replay of either run runs."""
    out = {}
    for na, nb, change in plan:
        out[na] = _changed_call(na, change, 0)
        out[nb] = _changed_call(nb, change, 1)
    return out


def apply_merge(old, new, plan):
    """Makes `old` dynamic by `plan` (from plan_merge) and the differing
    sizes of `new`."""
    for na, nb, change in plan:
        if change[0] == "dims":
            na.attrs[_SIZED[na.op]] = mw.encode_attr("int[]", change[1])
            na.call = _changed_call(na, change, 0)
        elif change[0] == "sym":
            key = _SIZED[na.op]
            na.attrs[key] = mw.encode_attr("int[]", [e if isinstance(e, int) else -1
                                                     for e in change[1]])
            _add_sym_size(na, key, _sym_sizes_attr(change[1], change[2]))
            na.call = _changed_call(na, change, 0)
            na.sizes = ()
        elif change[0] == "symattr":
            _add_sym_size(na, change[1], _sym_sizes_attr([change[2]], change[3]))
            na.call = _changed_call(na, change, 0)
            na.sizes = ()
        else:
            _rewrite_as(na, change[1])
    for a, b in zip(old, new):
        for va, vb in zip(_values(a), _values(b)):
            va.shape = tuple(_dims(va.shape, vb.shape))
        for g in a.guards:
            if g["kind"] == "tensor_match":
                src = next((h for h in b.guards if h.get("source") == g["source"]), None)
                if src is not None:
                    g["sizes"] = _dims(g["sizes"], src["sizes"])
                    g["strides"] = _dims(g["strides"], src["strides"])
                    g["text"] = guard_text(dict(g, dtype=g["dtype"]))


# --- Dynamic from one run ----------------------------------------------------
#
# mark_dynamic, dynamic=True, and a recompile of a region that has a dynamic
# variant already ask for dynamic dims before a second size has been seen.
# Then the capture's own graph is replayed on meta tensors with those dims
# changed (the shape oracle), and merged with itself as above. The replay
# keeps every attribute as recorded, so it is sound only where no attribute
# came from a size the replay does not recompute; these checks refuse the
# rest (the variant stays static and merges at a second size as before):
#   - a size the Python code passed to the op (x.view(b, -1)) is recomputed
#     from its source at the new sizes, and may only change a reshape's or
#     expand's size attribute;
#   - an op run inside Python code the evaluator did not follow (a
#     torch.nn.functional wrapper) must not take sizes at all;
#   - no other size attribute may hold the old value of a changed dim, nor
#     slice a changed dim with fixed bounds.

# Attributes that hold sizes or positions along a dim.
_SIZE_ATTRS = {"size", "shape", "sizes", "start", "end", "index", "split_size",
               "split_sizes", "sections", "length", "repeats", "pad", "k", "shifts",
               "output_size"}


class NotGeneral(Exception):
    """Why a capture cannot be made dynamic from this run; `pins`: the
    {source: dims} that caused it, when leaving them static would do."""

    def __init__(self, why, pins=None):
        super().__init__(why)
        self.pins = pins or {}


def _size_refs(text):
    """{source: dims} of the sizes a size source names."""
    out = {}
    for src, d in re.findall(r"(L\[[^\]]+\](?:\[\d+\])*)\.size\(\)\[(\d+)\]", text):
        out.setdefault(src, set()).add(int(d))
    return out


def _contiguous_strides(shape):
    strides, s = [], 1
    for d in reversed(shape):
        strides.append(s)
        s *= max(d, 1)
    return list(reversed(strides))


def _local_name(source):
    """'x' for "L['x']", or None for any other source."""
    if source.startswith("L['") and source.endswith("']"):
        return source[3:-2]
    return None


def _ints_in(obj):
    if isinstance(obj, bool):
        return []
    if isinstance(obj, int):
        return [obj]
    if isinstance(obj, (list, tuple)):
        return [i for x in obj for i in _ints_in(x)]
    return []


def _attr_ints(text):
    """The ints of an encoded int or int[] attribute, else []."""
    if text.startswith("array<i64"):
        return _ints(text)
    head, _, ty = text.partition(" : ")
    return [int(head)] if ty == "i64" else []


def _substitute(obj, env, known):
    """`obj` with Values as their replay tensors and the ints in `known` as
    their new values; 'cpu' devices as 'meta'."""
    return _symbolic.substitute(obj, env, lambda i: known.get(i, i), NotGeneral)


def _replay(graphs, inputs, sources, scope, hot):
    """New shapes of every Value of `graphs` (a region's, in order) when its
    user inputs have the shapes `inputs` ({source: shape}; the other region
    inputs, `sources`, keep theirs), and the new size attribute of each
    reshape/expand the Python code gave sizes to ({node: ints}). A graph's
    input made by an earlier graph takes that output's new shape; one made
    outside the graphs (at a break) cannot be recomputed."""
    env, shapes, sized = {}, {}, {}
    scope = dict(scope, ___v=env)  # sizes of computed tensors: `___v[12].size()[0]`
    by_name = {g.name: g for g in graphs}
    by_source = {}  # region input -> its replay tensor
    for graph in graphs:
        for v in graph.inputs:
            made, sep, index = v.name.rpartition(".output_")
            if v.kind == "user" and _guards.is_size_input(v.name):  # a number: no shape
                env[v.vid] = torch.empty((), dtype=v.dtype, device="meta")
                shapes[v.vid] = ()
                continue
            if v.kind == "user" and v.name not in sources:
                if not sep or made not in by_name:
                    raise NotGeneral(f"the graphs take {v.name}, a value made at a break")
                out = by_name[made].outputs[int(index)]
                env[v.vid], shapes[v.vid] = env[out.vid], shapes[out.vid]
                continue
            shape = inputs.get(v.name, v.shape) if v.kind == "user" else v.shape
            env[v.vid] = torch.empty(shape, dtype=v.dtype, device="meta")
            shapes[v.vid] = tuple(shape)
            if v.kind == "user":
                by_source[v.name] = env[v.vid]
        for n in graph.recorded_nodes or graph.nodes:
            if n.call is None:
                raise NotGeneral(f"{n.op} cannot be replayed")
            if callable(n.call):  # sizes written as expressions of the input dims
                func, args, kwargs = n.call(lambda src, d: by_source[src].shape[d])
                out = func(*_substitute(args, env, {}), **_substitute(kwargs, env, {}))
                for o, r in zip(out if isinstance(out, (tuple, list)) else (out,), n.results):
                    env[r.vid] = o
                    shapes[r.vid] = tuple(o.shape)
                continue
            func, args, kwargs = n.call
            size_attrs = {k: _attr_ints(v) for k, v in n.attrs.items()
                          if k.rstrip("_") in _SIZE_ATTRS}
            opaque = any(src == "<opaque>" for _, src in n.sizes)
            if opaque and size_attrs:
                raise NotGeneral(f"{n.op} takes sizes from Python code the evaluator did "
                                 f"not follow")
            known = {}
            for value, src in n.sizes:
                if src == "<opaque>":
                    continue
                try:
                    new = int(eval(src, scope))  # noqa: S307 - dynoc's own size sources
                except Exception:
                    raise NotGeneral(f"{n.op} takes a size whose origin is not tracked ({src})")
                if known.setdefault(value, new) != new:
                    raise NotGeneral(f"{n.op} takes two sizes of value {value}")
            changed = {k: v for k, v in known.items() if k != v}
            stale = [x for ints in size_attrs.values() for x in ints
                     if x in hot and x not in changed]
            if stale:
                raise NotGeneral(f"{n.op} has a size attribute of {stale[0]}, the size of a "
                                 f"dim made dynamic")
            new_args = _substitute(args, env, changed)
            new_kwargs = _substitute(kwargs, env, changed)
            if changed and size_attrs:
                if n.op not in _SIZED:
                    # A slice bound, say: those dims can stay static.
                    pins = {}
                    for value, src in n.sizes:
                        if value in changed and src != "<opaque>":
                            for k, ds in _size_refs(src).items():
                                pins.setdefault(k, set()).update(ds)
                    raise NotGeneral(f"{n.op} takes a size as an attribute", pins)
                pos = _FACTORIES.get(n.op, 1)
                sized[n] = list(new_args[pos] if len(new_args) > pos
                                else new_kwargs[_SIZED[n.op]])
            dim = n.attrs.get("dim")
            if size_attrs and n.op not in _SIZED and dim is not None and n.operands:
                d = int(dim.split(" ")[0])
                a = n.operands[0]
                if -len(a.shape) <= d < len(a.shape) and \
                        shapes[a.vid][d] != a.shape[d]:
                    raise NotGeneral(f"{n.op} indexes a dim made dynamic with fixed bounds")
            try:
                out = func(*new_args, **new_kwargs)
            except Exception as e:
                raise NotGeneral(f"{n.op} does not run at other sizes ({type(e).__name__})")
            outs = out if isinstance(out, (tuple, list)) else (out,)
            if len(outs) != len(n.results):
                raise NotGeneral(f"{n.op} makes another number of results at other sizes")
            for o, r in zip(outs, n.results):
                if not isinstance(o, torch.Tensor) or o.dtype != r.dtype or o.dim() != len(r.shape):
                    raise NotGeneral(f"{n.op} makes other results at other sizes")
                env[r.vid] = o
                shapes[r.vid] = tuple(o.shape)
    return shapes, sized


def generalize(graphs, guards, request, L, G, computed=()):
    """Makes one capture's graphs and guards dynamic in the requested dims
    ({source: dims}) without a second run. `computed`: the capture's
    decisions on sizes of computed tensors. Returns the merged guard list (the
    graphs are changed in place), or raises NotGeneral with the reason; then
    nothing has changed. Requested dims the graphs only run at their captured
    size (a matmul's contracted dim, say) stay static, as in Dynamo."""
    if not graphs:
        raise NotGeneral("the region made no graph")
    for _ in range(4):  # dims an attribute takes stay static; try the rest
        try:
            return _generalize(graphs, guards, request, L, G, computed)
        except NotGeneral as e:
            narrowed = {src: set(dims) - e.pins.get(src, set())
                        for src, dims in request.items()}
            narrowed = {src: dims for src, dims in narrowed.items() if dims}
            if not e.pins or not narrowed or narrowed == request:
                break
            request = narrowed
    try:
        return _generalize(graphs, guards, request, L, G, computed)
    except NotGeneral as first:
        sizes = {g["source"]: g["sizes"] for g in guards if g["kind"] == "tensor_match"}
        try:
            pinned = _symbolic.pinned_dims(graphs, sizes, _changeable(request, sizes))
        except _symbolic.Unresolved:
            raise first
        narrowed = {src: set(dims) - pinned.get(src, set()) for src, dims in request.items()}
        narrowed = {src: dims for src, dims in narrowed.items() if dims}
        if not pinned or not narrowed:
            raise first
        return _generalize(graphs, guards, narrowed, L, G, computed)


def _scope_for(tensors, new_sizes, L, G):
    """Guard scope where the sources in new_sizes are tensors of those sizes."""
    fake = dict(L)
    for src, shape in new_sizes.items():
        fake[_local_name(src)] = torch.empty(shape, dtype=tensors[src]["dtype"], device="meta")
    return {"L": fake, "G": G, "___G": _guards.module_globals}


def _free_sizes(guards, request, L, G, checks=None):
    """A new size for each requested dim ({source: dims}) that every size and
    value guard still allows. Returns ({source: new shape}, {source: dims a
    guard pins}); dims of size 0 and 1 are neither (they stay specialized, as
    in Dynamo), nor are dims of non-contiguous or unnamed tensors."""
    tensors = {g["source"]: g for g in guards if g["kind"] == "tensor_match"}
    if checks is None:
        checks = [g for g in guards if g["kind"] in ("size", "value")]

    def decided_alike(new_sizes):
        s = _scope_for(tensors, new_sizes, L, G)
        return _guards.first_failure(checks, s["L"], s["G"]) is None

    new_sizes, pinned = {}, {}
    for src, dims in request.items():
        t = tensors.get(src)
        if t is None or _local_name(src) is None or \
                t["strides"] != _contiguous_strides(t["sizes"]):
            continue
        for d in sorted(dims):
            old = t["sizes"][d] if 0 <= d < len(t["sizes"]) else None
            if old is None or old < 2:
                continue
            for new in (old + 1, old + 2, 2 * old):
                shape = list(new_sizes.get(src, t["sizes"]))
                shape[d] = new
                if decided_alike(dict(new_sizes, **{src: shape})):
                    new_sizes[src] = shape
                    break
            else:
                pinned.setdefault(src, set()).add(d)
    return new_sizes, pinned


def guard_pinned(guards, request, L, G):
    """The requested dims ({source: dims}) that a size or value guard of the
    capture pins to their size (a Python branch on `x.shape[0] == 3`)."""
    return _free_sizes(guards, request, L, G)[1]


def _changeable(request, sizes):
    """The requested dims that may turn dynamic: those of size 2 or more (0
    and 1 stay specialized, as in Dynamo)."""
    return {src: {d for d in dims if 0 <= d < len(sizes[src]) and sizes[src][d] >= 2}
            for src, dims in request.items() if src in sizes}


def _generalize(graphs, guards, request, L, G, computed):
    tensors = {g["source"]: g for g in guards if g["kind"] == "tensor_match"}
    checks = [g for g in guards if g["kind"] in ("size", "value")]
    resolved = []
    if computed:
        sizes = {src: t["sizes"] for src, t in tensors.items()}
        try:
            resolved = _symbolic.resolve(graphs, computed, sizes, _changeable(request, sizes))
        except _symbolic.Unresolved as e:
            raise NotGeneral(f"a decision on a computed size: {e}")
        checks += [{"kind": "size", "text": r.text} for r in resolved]
    hot = set()
    new_sizes, _ = _free_sizes(guards, request, L, G, checks)
    for src, shape in new_sizes.items():
        hot.update(tensors[src]["sizes"][d] for d, n in enumerate(shape)
                   if n != tensors[src]["sizes"][d])
    if not new_sizes:
        raise NotGeneral("no requested dim can change (sizes 0 and 1, or a size guard "
                         "pins it)")
    shapes, sized = _replay(graphs, new_sizes, set(tensors), _scope_for(tensors, new_sizes, L, G),
                            hot)

    class _Like:  # the replayed node, as _sized_attr reads it
        def __init__(self, node):
            self.op = node.op
            self.attrs = dict(node.attrs)
            self.results = [type("V", (), {"shape": shapes[r.vid]}) for r in node.results]
            self.operands = [type("V", (), {"shape": shapes[o.vid]}) for o in node.operands]

    attrs, as_form = {}, {}
    for node, ints in sized.items():
        like = _Like(node)
        like.attrs[_SIZED[node.op]] = mw.encode_attr("int[]", ints)
        dims = _sized_attr(node, like)
        if dims is not None:
            attrs[node] = dims
            continue
        operand = next((_as_operand(node, g) for g in graphs if node in g.nodes), None)
        if operand is None:
            raise NotGeneral(f"{node.op}'s size attribute cannot say the dynamic dims")
        as_form[node] = operand
    new_guards = []
    for g in guards:
        if g["kind"] == "tensor_match" and g["source"] in new_sizes:
            shape = new_sizes[g["source"]]
            g = dict(g, sizes=list(shape), strides=_contiguous_strides(shape))
        new_guards.append(g)
    merged = merge_guards(guards, new_guards)
    if merged is None:
        raise NotGeneral("the guards do not merge")
    add_size_guards(merged, graphs, resolved)
    # Nothing failed: change the graph.
    for node, dims in attrs.items():
        node.attrs[_SIZED[node.op]] = mw.encode_attr("int[]", dims)
        node.call = _changed_call(node, ("dims", dims), 0)
    for node, operand in as_form.items():
        _rewrite_as(node, operand)
    for graph in graphs:
        for v in _values(graph):
            v.shape = tuple(_dims(v.shape, shapes[v.vid]))
        for g in graph.guards:
            if g["kind"] == "tensor_match" and g["source"] in new_sizes:
                shape = new_sizes[g["source"]]
                g["sizes"] = _dims(g["sizes"], shape)
                g["strides"] = _dims(g["strides"], _contiguous_strides(shape))
                g["text"] = guard_text(g)
    return merged


# --- Decisions on sizes of computed tensors ---------------------------------


def _static_sizes(guards):
    sizes = {g["source"]: g["sizes"] for g in guards if g["kind"] == "tensor_match"}
    if any(None in shape for shape in sizes.values()):
        raise _symbolic.Unresolved("the variant is dynamic already")
    return sizes


def resolve_both(old, new, dims, calls):
    """The decisions on computed sizes of two runs about to merge (each
    (graphs, guard texts, guard list)), in the inputs' sizes with `dims`
    dynamic, replaying the nodes in `calls` as the merge changes them. Each
    must have come out alike in both runs. Raises _symbolic.Unresolved."""
    runs = [(graphs, texts, _static_sizes(guards)) for graphs, texts, guards in (old, new)
            if texts]
    if not runs:
        return []
    sizes = [_static_sizes(old[2]), _static_sizes(new[2])]
    out = {}
    for graphs, texts, own in runs:
        for r in _symbolic.resolve(graphs, texts, own, dims, calls):
            if not all(r.holds(s) for s in sizes):
                raise _symbolic.Unresolved(f"the runs decided {r.text} differently")
            out.setdefault(r.text, r)
    return list(out.values())


class Assumed:
    """An equality of input dims a merge took (plan_merge's `assumed`), as a
    resolved size decision."""

    def __init__(self, text):
        self.text = text


def add_size_guards(guards, graphs, resolved):
    """Adds the resolved decisions to a variant's guard list and its graphs'
    guards (with the fields the runtime checks)."""
    for r in resolved:
        guards.append({"kind": "size", "text": r.text})
        for g in graphs:
            inputs = {gd["source"]: gd["input"] for gd in g.guards if gd["kind"] == "tensor_match"}
            fields = _guards.size_guard_fields(r.text, inputs)
            g.guards.append({"kind": "size", "text": r.text, **fields} if fields
                            else {"kind": "value", "text": r.text})
