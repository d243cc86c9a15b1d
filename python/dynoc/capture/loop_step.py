"""The training step of a loop in a whole-script capture (docs/training.md,
"The step of a training loop").

`dynoc capture train.py` records a module-level loop (or one inside `main()`)
iteration by iteration; capture/repeats.py folds the iterations' identical
graphs into one graph each with a run count. A training loop then leaves a
cycle: a forward graph F (the batch to the loss), the backward graph B of
`loss.backward()` and an update graph U (the optimizer step), each run once per
iteration. This module stitches F, B and U into one step graph, `step_N.mlir`,
whose every call is one iteration, as capture/step.py does for the graphs of
one compiled call.

The graphs are read through the names of their latest folded run: there an
input `graph_U.output_4` of F is what the previous iteration's U wrote, the
step's state (a parameter or optimizer state, which the step reads as a weight
and writes back); an input of U named `graph_B.output_0` is this iteration's
gradient. Inputs made outside the loop (the batch, data the loop reuses) are
the step's user inputs; its result is the loss.
"""
import torch

from . import repeats as _repeats
from .graph import Graph, Node, Value
from .step import _OUTPUT, _SEED, _WEIGHT_KINDS, NotAStep, copy_nodes, loss_seed


def _latest_inputs(g):
    return g.latest_inputs or [v.name for v in g.inputs]


def _latest_mutations(g):
    return g.latest_mutations if g.latest_mutations is not None else g.mutations


def _read_graphs(g):
    """The graphs whose outputs `g`'s latest run reads."""
    names = set()
    for name in _latest_inputs(g):
        m = _OUTPUT.match(name or "") or _SEED.match(name or "")
        if m:
            names.add(m.group(1))
    return names


def find(graphs, weights):
    """[(forward, backward, update)]: the cycles of a folded loop, one per
    backward graph that ran more than once; or a NotAStep saying why a loop's
    backward has none."""
    by_name = {g.name: g for g in graphs}
    found = []
    for b in graphs:
        if b.kind != "backward" or b.runs < 2:
            continue
        # The forward is the graph whose loss seeds the backward pass.
        forward = [by_name[m.group(1)] for m in map(_SEED.match, _latest_inputs(b))
                   if m and m.group(1) in by_name]
        if len(forward) != 1 or forward[0].kind != "forward":
            found.append(NotAStep(f"the loop's backward graph {b.name} is seeded from "
                                  f"{len(forward)} graphs; a step has one loss"))
            continue
        if 2 * forward[0].runs < b.runs:
            cycle = {b.name} | {g.name for g in graphs if b.name in _read_graphs(g)}
            steady = _steady_without_data_prep(forward[0], graphs, weights, cycle, b.runs)
            if steady is None:
                found.append(_differs(forward[0], graphs, weights, "forward graph"))
                continue
            forward = [steady]
        # The update runs (nearly) every iteration; the first and the last
        # iterations, and those that print, may differ.
        readers = [g for g in graphs if g.kind == "forward" and b.name in _read_graphs(g)]
        updates = [g for g in readers if 2 * g.runs >= b.runs]
        if not updates:
            # two of the steady iterations (the first may differ for other reasons)
            pair = readers[-3:-1] if len(readers) > 3 else readers[:2]
            differ = len(pair) == 2 and _repeats.first_difference(*pair, weights)
            if differ and len(differ) > 160:
                differ = differ[:160] + " ..."
            found.append(NotAStep(
                f"the graphs that read {b.name}'s gradients differ from one iteration to "
                f"the next ({len(readers)} bodies; {pair[0].name} has {differ}, which "
                f"{pair[1].name} has not: a Python number that changes each iteration, "
                "such as a slice offset, is a constant of each graph)" if differ else
                f"no graph reads the gradients of {b.name} at every iteration (no "
                "optimizer update in the loop)"))
            continue
        update = max(updates, key=lambda g: g.runs)
        elsewhere = _written_elsewhere(graphs, {forward[0].name, b.name, update.name}, b.runs)
        if elsewhere:
            found.append(elsewhere)
            continue
        if update is forward[0]:
            try:
                forward_part, update_part = _split(update, b)
            except NotAStep as e:
                found.append(e)
                continue
            found.append((forward_part, b, update_part))
            continue
        found.append((forward[0], b, update))
    return found


def _written_elsewhere(graphs, cycle, iterations):
    """A NotAStep when a graph outside the cycle runs in (nearly) every
    iteration too, as folded repeats or as one graph per iteration with the
    same ops, and writes a tensor: the iteration does more than the step's
    forward, backward and update hold (a break inside the optimizer's update
    leaves its second half in a graph of its own). None otherwise."""
    def shape(h):
        return h.kind, tuple(sorted(h.op_counts().items()))
    alike = {}  # (the cycle's own last run may stand apart: it outputs more)
    for h in graphs:
        if h.name not in cycle:
            alike[shape(h)] = alike.get(shape(h), 0) + h.runs
    for h in graphs:
        if h.name not in cycle and h.mutations and 2 * alike[shape(h)] >= iterations:
            return NotAStep(
                f"{h.name} also runs in each iteration and writes {h.mutations[0]['input']} "
                "in place: the iteration holds more than one forward, backward and update "
                "graph (a break inside the optimizer's step, say), so no step graph holds "
                "all it does")
    return None


def _without_data_prep(g, cycle):
    """`g` without its data preparation: the ops that compute only from data
    made outside the loop's cycle (a batch sliced from a dataset tensor at an
    offset the loop counter gives, stacked, reshaped), whose results the rest
    reads as inputs `batch[k]`; None when it has none."""
    names = _latest_inputs(g)
    data = set()
    for v, n in zip(g.inputs, names):
        m = _OUTPUT.match(n or "") or _SEED.match(n or "")
        if v.kind == "constant" or (v.kind == "user" and not (
                m and (m.group(1) in cycle or m.group(1) == g.name))):
            data.add(v.vid)
    prep = []
    for n in g.nodes:
        if n.operands and not n.mutates and all(o.vid in data for o in n.operands):
            prep.append(n)
            data.update(r.vid for r in n.results)
    if not prep:
        return None
    made = {r.vid for n in prep for r in n.results}
    rest = [n for n in g.nodes if not any(r.vid in made for r in n.results)]
    # (an output only the script reads afterwards, made by the preparation,
    # is no input of the step: the last iteration outputs the batch it leaves)
    frontier = []
    for v in (o for n in rest for o in n.operands):
        if v.vid in made and all(v is not f for f in frontier):
            frontier.append(v)
    pruned = Graph(g.name, g.entry)
    batch = {v.vid: Value(pruned, v.shape, v.dtype, "user", f"batch[{k}]")
             for k, v in enumerate(frontier)}
    used = {o.vid for n in rest for o in n.operands} | \
        {o.vid for o in g.outputs if o.vid not in made}
    kept = [(v, n) for v, n in zip(g.inputs, names) if v.vid in used]
    pruned.inputs = [v for v, _ in kept] + list(batch.values())
    pruned.latest_inputs = [n for _, n in kept] + [v.name for v in batch.values()]
    pruned.nodes = [Node(n.op, [batch.get(o.vid, o) for o in n.operands], n.attrs,
                         n.segment_sizes, n.results, n.mutates) for n in rest]
    pruned.outputs = [batch.get(o.vid, o) for o in g.outputs]
    pruned.output_structure, pruned.kind = g.output_structure, g.kind
    pruned.mutations, pruned.mutated_tensors = g.mutations, g.mutated_tensors
    pruned.latest_mutations, pruned.ran_outside = _latest_mutations(g), g.ran_outside
    return pruned


def _steady_without_data_prep(g, graphs, weights, cycle, iterations):
    """The loop's forward `g` without its data preparation, when that is what
    changes from one iteration to the next: the same pruned body in at least
    half the iterations (guards aside: a value the loop counter gave is
    pinned by each). None otherwise."""
    def key(p):
        # The ops alone: the last iteration also outputs what the script
        # reads after the loop (its last batch, logits).
        saved = p.outputs, p.mutations
        p.outputs, p.mutations = [], []
        try:
            return _repeats.body_key(p, weights)
        finally:
            p.outputs, p.mutations = saved
    pruned = _without_data_prep(g, cycle)
    if pruned is None:
        return None
    want = key(pruned)
    same = g.runs  # iterations that ran this pruned body (folded ones by their runs)
    for h in graphs:
        if h.kind == g.kind and h.op_counts() == g.op_counts() and h is not g:
            other = _without_data_prep(h, cycle | {g.name})
            if other is not None and key(other) == want:
                same += h.runs
    return pruned if want is not None and 2 * same >= iterations else None


def _differs(g, graphs, weights, what):
    """Why the loop's `what` `g` did not fold with its other iterations: the
    first op or guard that keeps it apart from an earlier graph of its ops."""
    like = [h for h in graphs if h is not g and h.kind == g.kind and
            h.op_counts() == g.op_counts()]
    differ = like and _repeats.first_difference(g, like[-1], weights)
    if differ and len(differ) > 160:
        differ = differ[:160] + " ..."
    return NotAStep(
        f"the loop's {what} differs from one iteration to the next ({g.name} ran "
        f"{g.runs} time(s) as recorded" + (f"; it has {differ}, which {like[-1].name} has "
        "not: a Python number that changes each iteration, such as a slice offset, is a "
        "constant of each graph)" if differ else ")"))


def _split(g, backward):
    """A loop with no break between `opt.step()` and the next forward records
    one graph per iteration holding the update of the iteration before, then
    the forward: (forward part, update part) of `g`, as two graphs. The
    forward part is what the backward pass reads (its saved values, the loss)
    and all it is computed from, up to the new values of states, which it reads
    as the states at the start of the step (the same tensors, one step later);
    the update part is the rest."""
    names = _latest_inputs(g)
    grad_prefix = f"{backward.name}.output_"
    mutations = _latest_mutations(g)
    by_input = {n: v for v, n in zip(g.inputs, names)}
    # A state's new value -> the input it was read from (a gradient clipped
    # in place is no state: it is this step's value).
    written = {g.outputs[m["output"]].vid: by_input[m["input"]] for m in mutations
               if not m["input"].startswith(grad_prefix)}
    roots = set()
    for name in _latest_inputs(backward):
        m = _OUTPUT.match(name or "") or _SEED.match(name or "")
        if m and m.group(1) == g.name:
            roots.add(g.outputs[int(m.group(2))].vid)
    gradients = {v.vid for v, n in zip(g.inputs, names) if (n or "").startswith(grad_prefix)}
    producer = {r.vid: n for n in g.nodes for r in n.results}
    needed, stack = set(), [v for v in roots if v not in written]
    while stack:
        node = producer.get(stack.pop())
        if node is None or id(node) in needed:
            continue
        needed.add(id(node))
        stack.extend(o.vid for o in node.operands if o.vid not in written)
    forward = Graph(g.name, g.entry)
    forward.inputs, forward.latest_inputs = g.inputs, names
    update = Graph(f"{g.name}_update", g.entry)
    update.inputs, update.outputs = g.inputs, g.outputs
    for n in g.nodes:
        if id(n) not in needed:
            update.nodes.append(n)
            continue
        if any(o.vid in gradients for o in n.operands):
            raise NotAStep(f"in {g.name} the forward reads a gradient of {backward.name}")
        forward.nodes.append(Node(n.op, [written.get(o.vid, o) for o in n.operands], n.attrs,
                                  n.segment_sizes, n.results, n.mutates))
    forward.outputs = [written.get(o.vid, o) for o in g.outputs]
    forward.ran_outside = update.ran_outside = g.ran_outside
    # The update part's reads of the previous run's outputs are the states it
    # carries, as are its writes (the forward part, earlier in the step, does
    # not hold them).
    state = {m["input"] for m in mutations if m["input"].startswith(f"{g.name}.output_")}
    update.latest_inputs = [f"state:{n}" if n in state else n for n in names]
    made_in_forward = {r.vid for n in forward.nodes for r in n.results}
    for part, in_forward in ((forward, True), (update, False)):
        part.kind = "forward"
        part.latest_mutations, part.mutated_tensors = [], []
        for m, ref in zip(mutations, g.mutated_tensors):
            if (g.outputs[m["output"]].vid in made_in_forward) == in_forward:
                target = m["input"] if in_forward or m["input"] not in state \
                    else f"state:{m['input']}"
                part.latest_mutations.append({**m, "input": target})
                part.mutated_tensors.append(ref)
    return forward, update


def stitch(forward, backward, update, name, state_name):
    """The step graph `name` of one cycle. `state_name(tensor)` names a tensor
    the step carries from one iteration to the next (a session weight)."""
    pieces = [forward, backward, update]
    for g in pieces:
        for reason in g.ran_outside:
            # what it did happened eagerly, in no graph: the step would lack it
            raise NotAStep(f"an op runs outside the graphs after {g.name} in the loop "
                           f"({reason})")
    order = {g.name: i for i, g in enumerate(pieces)}
    step = Graph(name, forward.entry)
    env, outputs_of, state, written = {}, {}, {}, {}
    start, current = {}, {}  # weight name -> its input; -> its value now
    loss = []

    def weight(kind, name, shape, dtype):
        """A weight's value now: the step's input until a piece writes it (a
        tensor reached under two names, a parameter the forward reads by its
        name and the update by the graph that wrote it last, is one weight)."""
        if name not in start:
            start[name] = current[name] = step.add_input(shape, dtype, kind, name)
        return current[name]

    def carried(graph, index):
        """The weight for output `index` of `graph`'s previous run: the
        tensor one of the cycle's graphs writes there each iteration."""
        key = f"{graph}.output_{index}"
        if key not in state:
            t = next((ref() for g in pieces
                      for m, ref in zip(_latest_mutations(g), g.mutated_tensors)
                      if m["input"] in (key, f"state:{key}")), None)
            if t is None:
                raise NotAStep(f"the step reads {key}, which the iteration before computed "
                               "and which is no parameter or state it writes back")
            kind = "parameter" if isinstance(t, torch.nn.Parameter) else "buffer"
            state[key] = (kind, state_name(t), t.shape, t.dtype)
        return weight(*state[key])

    def resolve(piece, v, name):
        if v.kind in _WEIGHT_KINDS:
            return weight(v.kind, v.name, v.shape, v.dtype)
        m = _OUTPUT.match((name or "").removeprefix("state:"))
        if m and name.startswith("state:"):
            return carried(m.group(1), int(m.group(2)))
        if m and m.group(1) in order:
            if order[m.group(1)] < order[piece.name]:
                value = outputs_of[m.group(1)][int(m.group(2))]
                if value is None:
                    raise NotAStep(f"{piece.name} reads {name}, a value of the optimizer's "
                                   "update in the loop's graph")
                return value
            return carried(m.group(1), int(m.group(2)))
        m = _SEED.match(name or "")
        if m:
            if order.get(m.group(1), len(pieces)) >= order[piece.name]:
                raise NotAStep(f"{piece.name} seeds a backward pass from {name}, "
                               "outside the step")
            value = outputs_of[m.group(1)][int(m.group(2))]
            loss.append(value)
            return loss_seed(step, value)
        key = ("user", name)  # made before the loop: the batch, data it reuses
        if key not in env:
            env[key] = step.add_input(v.shape, v.dtype, "user", name)
        return env[key]

    guards, local = {}, {}
    for piece in pieces:
        used = {o.vid for n in piece.nodes for o in n.operands} | \
            {o.vid for o in piece.outputs}
        # One map for all pieces (value ids are unique): the update part of a
        # split graph reads values of its forward part.
        local.update({v.vid: resolve(piece, v, name)
                      for v, name in zip(piece.inputs, _latest_inputs(piece))
                      if v.vid in used})
        copy_nodes(step, piece, local)
        # None: a value of the other part of a split graph
        outputs_of[piece.name] = [local.get(o.vid) for o in piece.outputs]
        for m in _latest_mutations(piece):
            new = outputs_of[piece.name][m["output"]]
            made = _OUTPUT.match(m["input"].removeprefix("state:"))
            if made and m["input"].startswith("state:"):
                carried(made.group(1), int(made.group(2)))
                target = state[m["input"].removeprefix("state:")][1]
                current[target] = written[target] = new
                continue
            if made and made.group(1) in order and \
                    order[made.group(1)] < order[piece.name]:
                # this iteration's value changed in place (a gradient clipped)
                outputs_of[made.group(1)][int(made.group(2))] = new
                continue
            if made and made.group(1) in order:
                carried(made.group(1), int(made.group(2)))
                target = state[m["input"]][1]
                current[target] = written[target] = new
                continue
            src = piece.inputs[_latest_inputs(piece).index(m["input"])]
            if src.kind in _WEIGHT_KINDS:
                weight(src.kind, src.name, src.shape, src.dtype)
                current[src.name] = written[src.name] = new
                continue
            raise NotAStep(f"{piece.name} writes {m['input']}, made before the loop, "
                           "in place")
        for gd in piece.guards:
            if gd["kind"] == "global_state":
                guards.setdefault(gd["text"], gd)
    if not loss:
        raise NotAStep(f"{backward.name} has no loss seed")
    step.guards = list(guards.values())
    step.output_structure = {"type": "tensor", "graph": name,
                             "index": step.add_output(loss[0])}
    for target, value in written.items():
        step.mutations.append({"input": target, "output": step.add_output(value)})
    step.order_inputs()
    step.eliminate_dead_nodes()
    step.loop = {"forward": forward.name, "backward": backward.name,
                 "update": update.name, "iterations": backward.runs}
    return step


def steps(graphs, first_index, state_name, weights):
    """(step graphs, refusal reasons) of the loops among a whole-script
    region's folded `graphs`; the steps are named step_{first_index}, ..."""
    made, refused = [], []
    for cycle in find(graphs, weights):
        if isinstance(cycle, NotAStep):
            refused.append(str(cycle))
            continue
        try:
            step = stitch(*cycle, f"step_{first_index + len(made)}", state_name)
        except NotAStep as e:
            refused.append(str(e))
            continue
        # The loop's iterations: its backward's runs, recorded and counted,
        # and those of backward graphs with its ops that did not fold into it
        # (the last iteration's outputs more).
        b = cycle[1]
        alike = [g for g in graphs if g.kind == "backward" and g.op_counts() == b.op_counts()]
        step.loop["iterations"] = sum(g.runs + g.counted for g in alike)
        step.loop["recorded"] = sum(g.runs for g in alike)
        made.append(step)
    return made, refused
