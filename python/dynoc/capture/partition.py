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


class _Backward:
    """A backward graph being partitioned, with the lookups its rounds share:
    the node that made each forward value, the weights it takes by name."""

    def __init__(self, bwd, by_name, weights):
        self.bwd, self.by_name, self.weights = bwd, by_name, weights
        self.producers = {}  # forward graph name -> {vid: node}
        self.weight_inputs = {(v.kind, v.name): v for v in bwd.inputs if v.kind in _WEIGHT_KINDS}

    def producer(self, fwd, value):
        made = self.producers.get(fwd.name)
        if made is None:
            made = self.producers[fwd.name] = {r.vid: n for n in fwd.nodes for r in n.results}
        return made.get(value.vid)

    def weight(self, o):
        """`bwd`'s input for the forward's weight input `o`, added if missing."""
        w = self.weight_inputs.get((o.kind, o.name))
        if w is None:
            w = self.weight_inputs[(o.kind, o.name)] = self.bwd.add_input(
                o.shape, o.dtype, o.kind, o.name)
            self.weights[w.vid] = o
        return w

    def round(self):
        """Recomputes every saved value it can whose operands stay inputs this
        round (a chain moves one link per round, its consumer first, so each
        new node lands before the nodes that read it); returns the forward
        graphs whose outputs it stopped reading."""
        bwd = self.bwd
        saved = _saved_inputs(bwd, self.by_name)
        saved_vids = {fv.vid: bwd.inputs[i] for i, _, fv in saved}
        replaced, read, touched = {}, set(), set()
        for i, fwd, fv in saved:
            old = bwd.inputs[i]
            if id(old) in read:
                continue
            node = self.producer(fwd, fv)
            if node is None or node.op not in RECOMPUTABLE or len(node.results) != 1:
                continue
            sources = [o if o.kind in _WEIGHT_KINDS else saved_vids.get(o.vid)
                       for o in node.operands]
            if any(s is None or id(s) in replaced for s in sources):
                continue
            operands = [self.weight(o) if o.kind in _WEIGHT_KINDS else s
                        for o, s in zip(node.operands, sources)]
            read.update(id(s) for s in operands)
            result = type(fv)(bwd, fv.shape, fv.dtype)
            bwd.nodes.insert(0, Node(node.op, operands, dict(node.attrs), node.segment_sizes,
                                     [result], False, None, ()))
            bwd.recomputed[node.op] = bwd.recomputed.get(node.op, 0) + 1
            replaced[id(old)] = result
            touched.add(fwd.name)
        if replaced:
            for n in bwd.nodes:
                n.operands = [replaced.get(id(o), o) for o in n.operands]
            bwd.outputs = [replaced.get(id(o), o) for o in bwd.outputs]
            bwd._select_inputs([k for k, v in enumerate(bwd.inputs) if id(v) not in replaced])
        return touched


def _drop_unsaved_outputs(forwards, graphs):
    """Removes outputs of the graphs in `forwards` that only backward graphs
    read and none reads any more; renumbers every reference to the outputs
    after them (one pass over `graphs` for all of them)."""
    used = {}
    for g in graphs:
        for v in g.inputs:
            if v.kind == "user":
                for m in _REF.finditer(v.name or ""):
                    used.setdefault(m.group(1), set()).add(int(m.group(2)))
    renumbered = {}  # graph name -> {old output index: new}
    for fwd in forwards:
        reads = used.get(fwd.name, set())
        keep = [k for k, v in enumerate(fwd.outputs) if k in reads or v.vid not in fwd.saved_only]
        if len(keep) == len(fwd.outputs):
            continue
        where = renumbered[fwd.name] = {old: new for new, old in enumerate(keep)}
        fwd.outputs = [fwd.outputs[k] for k in keep]
        fwd.mutations = [{**m, "output": where[m["output"]]} for m in fwd.mutations]
        fwd.grads = [{**m, "output": where[m["output"]]} for m in fwd.grads]
    if not renumbered:
        return

    def rename(m):
        where = renumbered.get(m.group(1))
        return m.group(0) if where is None else f"{m.group(1)}.output_{where[int(m.group(2))]}"
    for g in graphs:
        for v in g.inputs:
            if v.kind == "user" and v.name:
                v.name = _REF.sub(rename, v.name)
        # (a write-back names its input as the input does)
        g.mutations = [{**m, "input": _REF.sub(rename, m["input"])} for m in g.mutations]
        g.output_structure = _renumber(g.output_structure, renumbered)


def _renumber(s, renumbered):
    if isinstance(s, dict):
        if s.get("type") == "tensor" and s.get("graph") in renumbered:
            s = {**s, "index": renumbered[s["graph"]][s["index"]]}
        return {k: _renumber(v, renumbered) if k == "items" else v for k, v in s.items()}
    if isinstance(s, list):
        return [_renumber(x, renumbered) for x in s]
    return s


def partition(graphs):
    """Moves cheap saved values of every backward graph in `graphs` into it
    (recomputed there) and drops the forward outputs no graph reads after.
    Returns {vid of a weight input it added to a backward graph: the forward
    graph's input Value for that weight}."""
    by_name = {g.name: g for g in graphs}
    touched, weights = set(), {}
    for bwd in (g for g in graphs if g.kind == "backward"):
        state = _Backward(bwd, by_name, weights)
        while True:
            moved = state.round()
            if not moved:
                break
            touched |= moved
    _drop_unsaved_outputs([by_name[name] for name in sorted(touched)], graphs)
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
