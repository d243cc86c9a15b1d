"""Compiled execution under autograd in the same process (docs/capture.md,
"In the same process"): a region called with grad mode on whose result
requires grad runs its built forward graph, and its built backward graph when
the program's backward reaches it.

At the first call the recorder runs a backward pass of its own over the
result (ones as the output gradients, the program's `.grad` untouched;
_recorder.Tracker.record_backward), so the variant has a forward graph that
also returns what the backward reads and a backward graph that takes those,
the output gradients (`grad(graph_N.output_K)`) and region inputs, and returns
the gradient of each trained leaf. Both are built and bound to the program's
tensors; a torch.autograd.Function runs the first on the call and the second on
backward(), as dynoc.load_trainable does for the AOT path (runtime/trainable.py).
"""
import torch

from . import built as _built
from ..runtime.trainable import _OUTPUT, _SEED, backward_inputs
from ..runtime.model import _rebuild


def _result_indices(s, out):
    """The forward outputs the result structure `s` names, in order."""
    if s.get("type") == "tensor":
        out.append(s["index"])
    items = s.get("items", ())
    for item in (items.values() if isinstance(items, dict) else items):
        _result_indices(item, out)
    return out


def _renumber(s, where):
    """`s` with each tensor's index replaced by its position in the Function's
    results."""
    if s.get("type") == "tensor":
        return dict(s, index=where[s["index"]])
    if "items" in s:
        items = s["items"]
        if isinstance(items, dict):
            return dict(s, items={k: _renumber(v, where) for k, v in items.items()})
        return dict(s, items=[_renumber(v, where) for v in items])
    return s


class _Run(torch.autograd.Function):
    @staticmethod
    def forward(ctx, graph, *args):
        n = len(graph.input_sources)
        inputs = args[:n]
        outputs = graph.forward_model.run(*inputs)
        ctx.graph, ctx.inputs, ctx.outputs = graph, inputs, outputs
        results = tuple(outputs[k] for k in graph.results)
        ctx.mark_non_differentiable(*[r for r, k in zip(results, graph.results)
                                      if k not in graph.seeds])
        return results

    @staticmethod
    def backward(ctx, *grads):
        g = ctx.graph
        out = g.backward_model.run(*backward_inputs(g.backward_feed, ctx.outputs, ctx.inputs,
                                                    dict(zip(g.results, grads))))
        result = [None] * (len(ctx.inputs) + len(g.leaf_names))
        for name, k in g.grads:
            result[g.leaf_position[name]] = out[k]
        return (None, *result)


class TrainingGraph:
    """A variant's forward and backward graphs, built and loaded: called with
    the region's L and G, it returns the region's result with an autograd
    graph whose backward runs the built backward."""

    def __init__(self, forward, backward, weights, sources, cuda_graphs=False):
        structure = next(g.output_structure for g in (forward, backward)
                         if g.output_structure.get("type") != "intermediate")
        self.forward_model = _built.BuiltGraph(forward, weights, sources, cuda_graphs)
        self.backward_model = _built.BuiltGraph(backward, weights, sources, cuda_graphs)
        self.input_sources = [v.name for v in forward.inputs if v.kind == "user"]
        self.inputs = self.forward_model.inputs
        position = {name: k for k, name in enumerate(self.input_sources)}
        self.backward_feed, self.seeds = [], set()
        for v in backward.inputs:
            if v.kind != "user":
                continue
            saved, seed = _OUTPUT.match(v.name), _SEED.match(v.name)
            if saved and saved.group(1) == forward.name:
                self.backward_feed.append(("saved", int(saved.group(2))))
            elif seed and seed.group(1) == forward.name:
                self.backward_feed.append(("seed", int(seed.group(2))))
                self.seeds.add(int(seed.group(2)))
            elif v.name in position:
                self.backward_feed.append(("input", position[v.name]))
            else:
                raise _built.NotCompiled(f"the backward graph reads '{v.name}', which is "
                                       "neither a forward output nor a region input")
        # Trained leaves: region inputs (by position) and weights (the
        # program's tensors, passed to the Function so that autograd gives
        # them their gradients).
        self.grads = [(g["input"], g["output"]) for g in backward.grads]
        self.leaf_names = [name for name, _ in self.grads if name not in position]
        self.leaf_tensors = [weights[name] for name in self.leaf_names]
        self.leaf_position = dict(position)
        for k, name in enumerate(self.leaf_names):
            self.leaf_position[name] = len(position) + k
        self.results = _result_indices(structure, [])
        self.structure = _renumber(structure, {k: i for i, k in enumerate(self.results)})
        self.returned = _built.ReturnedArguments(structure)
        self.calls = 0

    def __call__(self, L, G):
        for model in (self.forward_model, self.backward_model):
            # A replaced parameter: its gradient would go to the old one.
            if model.stale(L, G) or model.refresh_weights(rebind_replaced=False):
                return _built.STALE
        self.calls += 1
        _built.counters["compiled_calls"] += 1
        outputs = _Run.apply(self, *self.inputs(L, G), *self.leaf_tensors)
        return _rebuild(self.structure, list(outputs), self.returned(L, G))
