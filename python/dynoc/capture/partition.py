"""Decides what a forward graph saves for its backward graph and what the
backward recomputes (docs/training.md, "Saved values and recomputation").

As recorded, a backward graph reads every forward value autograd saved as an
output of the forward graph (`graph_N.output_K`). A saved value that a cheap op
(pointwise or a view: RECOMPUTABLE) made from values the backward can read anyway
(weights, or values it saves for other reasons) is recomputed in the backward
instead, and the forward stops returning it: fewer bytes live between the two
passes, as AOTAutograd's min-cut partitioner recomputes cheap pointwise ops.
Repeated to a fixed point, so chains of cheap ops move too.
"""
import re

from .graph import Node

# Ops cheap enough to run twice: elementwise and views (their outputs cost
# memory bandwidth to save and reload, and little compute to remake).
RECOMPUTABLE = frozenset({
    "aten.relu", "aten.sigmoid", "aten.tanh", "aten.gelu", "aten.silu", "aten.neg",
    "aten.exp", "aten.abs", "aten.add.Tensor", "aten.sub.Tensor", "aten.mul.Tensor",
    "aten.div.Tensor", "aten.rsub.Scalar", "aten.pow.Tensor_Scalar", "aten.t",
    "aten.transpose.int", "aten.permute", "aten.view", "aten._unsafe_view",
    "aten.unsqueeze", "aten.squeeze.dim", "aten.expand", "aten.detach", "aten.alias",
})
_SAVED = re.compile(r"^(graph_\d+)\.output_(\d+)$")
# Any reference to a graph's output in an input name (`grad(graph_0.output_2)`).
_REF = re.compile(r"\b(graph_\d+)\.output_(\d+)\b")
_WEIGHT_KINDS = ("parameter", "buffer", "constant")


def _saved_inputs(bwd, by_name):
    """[(input index, forward graph, forward Value)] of `bwd`'s saved inputs."""
    out = []
    for i, v in enumerate(bwd.inputs):
        m = _SAVED.match(v.name or "") if v.kind == "user" else None
        fwd = by_name.get(m.group(1)) if m else None
        if fwd is not None and fwd.kind == "forward":
            out.append((i, fwd, fwd.outputs[int(m.group(2))]))
    return out


def _recompute_one(bwd, fwd, value, saved_vids, weights):
    """Recomputes `value` (a saved output of `fwd`) in `bwd` if the node that
    made it is cheap and its operands are weights or other saved values;
    returns the new Value, or None. A weight the backward did not take yet
    becomes its input; `weights` maps its vid to the forward's input."""
    node = next((n for n in fwd.nodes if any(r is value for r in n.results)), None)
    if node is None or node.op not in RECOMPUTABLE or len(node.results) != 1:
        return None
    operands = []
    for o in node.operands:
        if o.kind in _WEIGHT_KINDS:
            w = next((i for i in bwd.inputs if i.kind == o.kind and i.name == o.name), None)
            if w is None:
                w = bwd.add_input(o.shape, o.dtype, o.kind, o.name)
                weights[w.vid] = o
            operands.append(w)
        elif o.vid in saved_vids:
            operands.append(saved_vids[o.vid])
        else:
            return None
    result = type(value)(bwd, value.shape, value.dtype)
    bwd.nodes.insert(0, Node(node.op, operands, dict(node.attrs), node.segment_sizes,
                             [result], False, None, ()))
    bwd.recomputed[node.op] = bwd.recomputed.get(node.op, 0) + 1
    return result


def _replace_uses(graph, old, new):
    for n in graph.nodes:
        n.operands = [new if o is old else o for o in n.operands]
    graph.outputs = [new if o is old else o for o in graph.outputs]


def _drop_unsaved_outputs(fwd, graphs):
    """Removes outputs of `fwd` that only backward graphs read and none reads
    any more; renumbers every reference to the outputs after them."""
    used = {int(m.group(2)) for g in graphs for v in g.inputs if v.kind == "user"
            for m in _REF.finditer(v.name or "") if m.group(1) == fwd.name}
    keep = [k for k, v in enumerate(fwd.outputs) if k in used or v.vid not in fwd.saved_only]
    if len(keep) == len(fwd.outputs):
        return
    where = {old: new for new, old in enumerate(keep)}
    fwd.outputs = [fwd.outputs[k] for k in keep]
    for g in graphs:
        for v in g.inputs:
            if v.kind == "user" and v.name:
                v.name = _REF.sub(lambda m: m.group(0) if m.group(1) != fwd.name else
                                  f"{fwd.name}.output_{where[int(m.group(2))]}", v.name)
        g.output_structure = _renumber(g.output_structure, fwd.name, where)
    fwd.mutations = [{**m, "output": where[m["output"]]} for m in fwd.mutations]
    fwd.grads = [{**m, "output": where[m["output"]]} for m in fwd.grads]


def _renumber(s, name, where):
    if isinstance(s, dict):
        if s.get("type") == "tensor" and s.get("graph") == name:
            s = {**s, "index": where[s["index"]]}
        return {k: _renumber(v, name, where) if k == "items" else v for k, v in s.items()}
    if isinstance(s, list):
        return [_renumber(x, name, where) for x in s]
    return s


def partition(graphs):
    """Moves cheap saved values of every backward graph in `graphs` into it
    (recomputed there) and drops the forward outputs no graph reads after.
    Returns {vid of a weight input it added to a backward graph: the forward
    graph's input Value for that weight}."""
    by_name = {g.name: g for g in graphs}
    touched, weights = set(), {}
    for bwd in (g for g in graphs if g.kind == "backward"):
        changed = True
        while changed:
            changed = False
            saved = _saved_inputs(bwd, by_name)
            saved_vids = {fv.vid: bwd.inputs[i] for i, _, fv in saved}
            for i, fwd, fv in saved:
                old = bwd.inputs[i]
                new = _recompute_one(bwd, fwd, fv, saved_vids, weights)
                if new is None:
                    continue
                _replace_uses(bwd, old, new)
                bwd._select_inputs([k for k, v in enumerate(bwd.inputs) if v is not old])
                touched.add(fwd.name)
                changed = True
                break
    for name in touched:
        _drop_unsaved_outputs(by_name[name], graphs)
    return weights


def saved_bytes(bwd, graphs):
    """(count, bytes) of the forward values `bwd` reads (what stays alive
    between the forward and the backward)."""
    by_name = {g.name: g for g in graphs}
    total, count = 0, 0
    for _, _, fv in _saved_inputs(bwd, by_name):
        n = 1
        for d in fv.shape:
            n *= d
        total += n * fv.dtype.itemsize
        count += 1
    return count, total
