"""A recorded graph: inputs, ATen nodes, outputs and guards."""
import itertools

_vids = itertools.count()


class Value:
    """A tensor in a graph: a graph input or a node result."""
    __slots__ = ("vid", "graph", "shape", "dtype", "kind", "name")

    def __init__(self, graph, shape, dtype, kind=None, name=None):
        self.vid = next(_vids)
        self.graph = graph
        self.shape = tuple(shape)
        self.dtype = dtype
        self.kind = kind  # inputs: user, parameter, buffer, constant
        self.name = name


class Node:
    __slots__ = ("op", "operands", "attrs", "segment_sizes", "results", "mutates",
                 "call", "sizes")

    def __init__(self, op, operands, attrs, segment_sizes, results, mutates,
                 call=None, sizes=()):
        self.op = op
        self.operands = operands
        self.attrs = attrs
        self.segment_sizes = segment_sizes
        self.results = results
        self.mutates = mutates
        # (ATen overload, args, kwargs) with tensors as their Values: what
        # capture/dynamic.py replays on meta tensors at other sizes.
        self.call = call
        # (int, source) of the tensor sizes the Python call that made this
        # node passed in, e.g. (4, "L['x'].size()[0]") for x.view(b, -1).
        self.sizes = sizes


class Graph:
    def __init__(self, name, entry):
        self.name = name
        self.entry = entry
        self.inputs = []
        self.nodes = []
        self.outputs = []
        self.output_structure = None
        self.guards = []
        self.mutations = []  # {"input": name, "output": index}: write back
        self.mutated_tensors = []  # weakrefs of the tensors `mutations` write, in order
        self.examples = None  # name -> tensor (DYNOC_SAVE_EXAMPLES)
        self.recorded_nodes = None  # every node, before dead ones are dropped
        self.runs = 1  # how many recorded graphs had this body (capture/repeats.py)
        self.folded = []  # the names of the later ones, folded into this one
        # Runs of a settled loop's iterations, counted, not recorded
        # (capture/loop_skip.py): runs + counted is how often the body ran.
        self.counted = 0
        # The input names and mutations of the latest folded occurrence (the
        # same as this graph's own when none was folded): in a loop, these name
        # the graphs of the iteration before (capture/loop_step.py).
        self.latest_inputs = None
        self.latest_mutations = None
        # Ops that ran eagerly right after this graph (a break's op): their
        # effects are in no graph (capture/loop_step.py refuses such a loop).
        self.ran_outside = []
        # Training capture (docs/training.md): "forward" or "backward" (the ops
        # the autograd engine ran for one backward pass).
        self.kind = "forward"
        self.grads = []  # backward: {"input": leaf name, "output": index}
        self.saved_only = set()  # vids output only because a backward reads them
        self.recomputed = {}  # backward: op -> count the partitioner moved here

    def add_input(self, shape, dtype, kind, name):
        v = Value(self, shape, dtype, kind, name)
        self.inputs.append(v)
        return v

    def add_output(self, value, saved=False):
        """Makes `value` an output (once); returns its output index. `saved`:
        only a backward graph reads it (the partitioner may take it back)."""
        for i, o in enumerate(self.outputs):
            if o is value:
                if not saved:
                    self.saved_only.discard(value.vid)
                return i
        self.outputs.append(value)
        if saved:
            self.saved_only.add(value.vid)
        return len(self.outputs) - 1

    def eliminate_dead_nodes(self):
        """Drops nodes nothing uses (autograd's bookkeeping detach, say);
        mutating nodes stay."""
        live = {v.vid for v in self.outputs}
        kept = []
        for node in reversed(self.nodes):
            if node.mutates or any(r.vid in live for r in node.results):
                kept.append(node)
                live.update(v.vid for v in node.operands)
        self.nodes = kept[::-1]
        self._select_inputs([i for i, v in enumerate(self.inputs)
                             if v.vid in live or v.kind == "user"])

    def order_inputs(self):
        """User inputs first (in first-use order), then weights: the order the
        runtime's calling convention expects. Remaps tensor guards."""
        self._select_inputs(sorted(range(len(self.inputs)),
                                   key=lambda i: self.inputs[i].kind != "user"))

    def _select_inputs(self, indices):
        """Keeps the inputs at `indices`, in that order; tensor guards follow."""
        where = {old: new for new, old in enumerate(indices)}
        self.inputs = [self.inputs[i] for i in indices]
        for g in self.guards:
            if g["kind"] == "tensor_match":
                g["input"] = where[g["input"]]

    def op_counts(self):
        counts = {}
        for n in self.nodes:
            counts[n.op] = counts.get(n.op, 0) + 1
        return counts
