"""Automatic dynamic shapes.

When a region recompiles only because tensor sizes changed, and the new capture
made the same graphs as an earlier variant (same ops, attributes and wiring; every
Python value the region read equal), the two merge into one variant whose differing
dims are dynamic: `None` in guards (`size=[None, 16]`), `?` in the graphs' types.
This is what Dynamo's `dynamic=None` does on a recompile. The second capture is the
shape oracle: a dim is dynamic exactly where the two real runs differ. A size that
Python code read (`b, n = x.shape`) is a value guard that differs between the runs,
so such regions stay static (one variant per size) rather than risk a graph that
hard-codes the size somewhere.
"""
import json


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


def _signature(graph, weights):
    """Everything about a graph but its tensors' sizes, with values numbered."""
    ids = {}
    for v in graph.inputs:
        ids[v.vid] = len(ids)
    nodes = []
    for n in graph.nodes:
        for r in n.results:
            ids[r.vid] = len(ids)
        nodes.append((n.op, [ids.get(o.vid) for o in n.operands], sorted(n.attrs.items()),
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
