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

from . import _mlir_writer as mw


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


def _signature(graph, weights):
    """Everything about a graph but its tensors' sizes, with values numbered."""
    ids = {}
    for v in graph.inputs:
        ids[v.vid] = len(ids)
    nodes = []
    for n in graph.nodes:
        for r in n.results:
            ids[r.vid] = len(ids)
        attrs = sorted((k, v) for k, v in n.attrs.items() if _SIZED.get(n.op) != k)
        nodes.append((n.op, [ids.get(o.vid) for o in n.operands], attrs,
                      n.segment_sizes, [(str(r.dtype), len(r.shape)) for r in n.results]))
    structure = json.dumps(graph.output_structure, sort_keys=True).replace(graph.name, "<self>")
    return ([_input_key(v, weights) for v in graph.inputs], nodes,
            [ids.get(v.vid) for v in graph.outputs], graph.mutations, structure)


def _values(graph):
    return list(graph.inputs) + [r for n in graph.nodes for r in n.results]


def merge_graphs(old, new, weights):
    """Makes the graphs `old` (an earlier variant's, in place) dynamic where
    `new` (the same region at other sizes) differs. False, and nothing changed,
    when the graphs are not the same computation."""
    if len(old) != len(new) or \
            any(_signature(a, weights) != _signature(b, weights) for a, b in zip(old, new)):
        return False
    sized = []  # (node, its merged size attribute)
    for a, b in zip(old, new):
        for na, nb in zip(a.nodes, b.nodes):
            if na.op in _SIZED and na.attrs[_SIZED[na.op]] != nb.attrs[_SIZED[na.op]]:
                dims = _sized_attr(na, nb)
                if dims is None:
                    return False
                sized.append((na, dims))
    for node, dims in sized:
        node.attrs[_SIZED[node.op]] = mw.encode_attr("int[]", dims)
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
    return True
