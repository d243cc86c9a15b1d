"""Stitches the graphs of one training-step capture into one step graph
(docs/training.md, "The training step graph").

A region that runs forward, loss.backward() and an optimizer step records a
forward graph, a backward graph and an update graph, linked by names: the
backward reads `graph_N.output_K` (saved values) and `grad(graph_N.output_K)`
(the loss's gradient seed), the update reads the backward's gradients and writes
the parameters and the optimizer state back (`mutations`). When every input of
those graphs is a region argument, a weight or another of the graphs' outputs,
they are one function: the step graph, `step_N.mlir`, built by `dynoc build` into
a model whose every call is one training step (libdynrt keeps the written
parameters and optimizer state in the model's own copy of its weights).
"""
import re

from . import mlir_writer as mw
from .graph import Graph, Node, Value

_OUTPUT = re.compile(r"^(graph_\d+)\.output_(\d+)$")
_SEED = re.compile(r"^grad\((graph_\d+)\.output_(\d+)\)$")
_WEIGHT_KINDS = ("parameter", "buffer", "constant")


class NotAStep(Exception):
    """The graphs are not one closed training step; the message says why."""


def _input_value(step, env, outputs_of, v):
    """The step's Value for input `v` of one of the graphs."""
    name = v.name or ""
    if v.kind in _WEIGHT_KINDS:
        key = (v.kind, name)
        if key not in env:
            env[key] = step.add_input(v.shape, v.dtype, v.kind, name)
        return env[key]
    m = _OUTPUT.match(name)
    if m:
        if m.group(1) not in outputs_of:
            raise NotAStep(f"input '{name}' comes from a graph outside the step")
        return outputs_of[m.group(1)][int(m.group(2))]
    m = _SEED.match(name)
    if m:
        if m.group(1) not in outputs_of:
            raise NotAStep(f"input '{name}' seeds a graph outside the step")
        return loss_seed(step, outputs_of[m.group(1)][int(m.group(2))])
    if name.startswith("L["):
        key = ("user", name)
        if key not in env:
            env[key] = step.add_input(v.shape, v.dtype, "user", name)
        return env[key]
    raise NotAStep(f"input '{name}' is made outside the graphs")


def loss_seed(step, loss):
    """loss.backward()'s gradient seed, ones_like(loss), made in `step`."""
    seed = Value(step, loss.shape, loss.dtype)
    step.nodes.append(Node("aten.ones_like", [loss], {
        "pin_memory": "false", "memory_format": mw.string_attr("torch.preserve_format")},
        None, [seed], False))
    return seed


def copy_nodes(step, g, local):
    """Appends `g`'s nodes to `step`, reading `local` (vid of a `g` value ->
    the step's Value) for their operands and adding their results to it."""
    for n in g.nodes:
        results = [Value(step, r.shape, r.dtype) for r in n.results]
        for r, nr in zip(n.results, results):
            local[r.vid] = nr
        step.nodes.append(Node(n.op, [local[o.vid] for o in n.operands], dict(n.attrs),
                               n.segment_sizes, results, n.mutates))


def _structure(s, outputs_of, step):
    if isinstance(s, dict):
        if s.get("type") == "tensor":
            if s.get("graph") not in outputs_of:
                raise NotAStep(f"the result comes from {s.get('graph')}, outside the step")
            value = outputs_of[s["graph"]][s["index"]]
            return {"type": "tensor", "graph": step.name, "index": step.add_output(value)}
        return {k: _structure(v, outputs_of, step) if k == "items" else v for k, v in s.items()}
    if isinstance(s, list):
        return [_structure(x, outputs_of, step) for x in s]
    return s


def stitch(graphs, breaks, name, gradients=False):
    """The step graph `name` of `graphs` (one region call's graphs, in
    order, and its `breaks`), or raises NotAStep. Only a call that recorded a
    backward graph and something after it (an update), and broke nowhere but
    at its backward passes, is a training step: any other break ran Python
    whose results (an `.item()`'s number, say) the graphs hold as constants of
    that one call. `gradients`: the step also returns each trained leaf's
    gradient as the call left it (after an in-place clip, say), listed in
    `step.gradients` ({"input": leaf, "output": index}; not written to the
    graph's file); the in-process step sets
    `.grad` from them."""
    kinds = [g.kind for g in graphs]
    if "backward" not in kinds or kinds[-1] == "backward" or any(g.runs > 1 for g in graphs):
        raise NotAStep("no backward graph followed by an update")
    for b in breaks:
        if not b["reason"].startswith("autograd backward pass: recorded"):
            raise NotAStep(f"it breaks at {b['location']} ({b['reason']}), and a step "
                           "graph is one closed function of the call's inputs and weights")
    step = Graph(name, graphs[0].entry)
    env, outputs_of, written, guards = {}, {}, {}, {}
    for g in graphs:
        local = {}
        for v in g.inputs:
            if v.name and v.name.endswith(".grad") and v.kind == "user":
                raise NotAStep(f"the backward accumulates into '{v.name}', set before the "
                               "step (zero_grad() between steps makes it a new gradient)")
            local[v.vid] = _input_value(step, env, outputs_of, v)
        copy_nodes(step, g, local)
        outputs_of[g.name] = [local[o.vid] for o in g.outputs]
        for m in g.mutations:
            src = next(v for v in g.inputs if v.name == m["input"])
            new = outputs_of[g.name][m["output"]]
            made = _OUTPUT.match(src.name or "")
            if made:
                # A value of the step changed in place (a gradient accumulated
                # by a second backward pass): later graphs read the new value;
                # nothing outside the step is written.
                outputs_of[made.group(1)][int(made.group(2))] = new
                continue
            key = (src.kind, src.name)
            env[key] = written[key] = new
        for gd in g.guards:
            guards.setdefault(gd["text"], gd)
    step.output_structure = _structure(graphs[-1].output_structure, outputs_of, step)
    if gradients:
        last = {}  # leaf -> its gradient's value, from the last backward pass
        for g in graphs:
            for entry in g.grads if g.kind == "backward" else ():
                last[entry["input"]] = outputs_of[g.name][entry["output"]]
        step.gradients = [{"input": leaf, "output": step.add_output(value)}
                      for leaf, value in last.items()]
    for (kind, input_name), value in written.items():
        step.mutations.append({"input": input_name, "output": step.add_output(value)})
    index = {v.name: i for i, v in enumerate(step.inputs) if v.kind == "user"}
    for gd in guards.values():
        if gd["kind"] == "tensor_match":
            if gd["source"] in index:
                step.guards.append({**gd, "input": index[gd["source"]]})
        elif gd["kind"] != "size" or "terms" not in gd:
            step.guards.append(gd)
    step.order_inputs()
    step.eliminate_dead_nodes()
    return step
