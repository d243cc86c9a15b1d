"""dynoc.load_trainable: a captured forward graph and its backward graph, built
into two model .so files, as a torch module that trains under torch.autograd
(docs/training.md, "Forward and backward from Python").

The forward graph returns the region's values and what its backward reads
(`graph_N.output_K`); the backward graph takes those, the gradients of the
forward's differentiable results (`grad(graph_N.output_K)`) and region inputs,
and returns the gradient of each trained leaf (its manifest's `grads`). Here a
`torch.autograd.Function` runs the first on the call and the second on
`backward()`. The trained parameters are the module's own `nn.Parameter`s
(initialized from the forward model's weights): each call writes their current
values into both models, so a torch optimizer, `clip_grad_norm_`, a scheduler,
anything that works on `module.parameters()`, drives them.
"""
import re

import torch

from .model import load

_OUTPUT = re.compile(r"^(graph_\d+)\.output_(\d+)$")
_SEED = re.compile(r"^grad\((graph_\d+)\.output_(\d+)\)$")


def _graph(model):
    return model.manifest["graphs"][0]


def backward_inputs(feed, outputs, inputs, output_grads):
    """The backward graph's user inputs, in its order, as `feed` lists them:
    ("saved", k) a forward output, ("seed", k) the gradient of forward output
    k (`output_grads`; zeros where autograd gives none), ("input", i) region
    input i."""
    values = []
    for kind, value in feed:
        if kind == "saved":
            values.append(outputs[value])
        elif kind == "seed":
            g = output_grads.get(value)
            values.append(torch.zeros_like(outputs[value]) if g is None else g)
        else:
            values.append(inputs[value])
    return [v.contiguous() for v in values]


class _Step(torch.autograd.Function):
    @staticmethod
    def forward(ctx, trainable, *args):
        n = trainable._num_user_inputs
        inputs, params = args[:n], args[n:]
        trainable._write_parameters(params)
        outputs = trainable._forward_model.run_outputs(*inputs)
        ctx.trainable, ctx.inputs, ctx.outputs = trainable, inputs, outputs
        results = tuple(outputs[k] for k in trainable._result_outputs)
        return results[0] if len(results) == 1 else results

    @staticmethod
    def backward(ctx, *grads):
        t = ctx.trainable
        feed = backward_inputs(t._backward_feed, ctx.outputs, ctx.inputs,
                               dict(zip(t._result_outputs, grads)))
        out = t._backward_model.run_outputs(*feed)
        result = [None] * (len(ctx.inputs) + len(t._param_names))
        for grad in _graph(t._backward_model).get("grads", []):
            name, k = grad["input"], grad["output"]
            if name in t._param_index:
                result[len(ctx.inputs) + t._param_index[name]] = out[k]
            elif name in t._input_index:
                result[t._input_index[name]] = out[k]
        return (None, *result)


class TrainableModel(torch.nn.Module):
    """A forward and a backward model as one differentiable module: calling it
    returns the forward graph's differentiable results (those whose gradient
    the backward graph takes), and their `backward()` gives every trained
    parameter its `.grad`."""

    def __init__(self, forward_so, backward_so):
        super().__init__()
        self._forward_model, self._backward_model = load(forward_so), load(backward_so)
        fwd, bwd = _graph(self._forward_model), _graph(self._backward_model)
        users = [i["name"] for i in fwd["inputs"] if i["kind"] == "user"]
        self._num_user_inputs = len(users)
        self._input_index = {name: k for k, name in enumerate(users)}
        grads = bwd.get("grads")
        if bwd.get("kind") != "backward" or not grads:
            raise ValueError(f"{backward_so}: graph '{bwd['name']}' is not a backward graph "
                             "(its manifest has no 'grads')")
        reads = {m.group(1) for i in bwd["inputs"]
                 for m in [_OUTPUT.match(i["name"]) or _SEED.match(i["name"])] if m}
        if reads != {fwd["name"]}:
            raise ValueError(f"{backward_so}: graph '{bwd['name']}' is the backward of "
                             f"{sorted(reads)}, not of '{fwd['name']}' ({forward_so})")
        # The backward's region inputs, in its order: a saved forward output,
        # a gradient seed of a forward output, or a region input.
        self._backward_feed, seeds = [], []
        for i in bwd["inputs"]:
            if i["kind"] != "user":
                continue
            saved, seed = _OUTPUT.match(i["name"]), _SEED.match(i["name"])
            if saved and saved.group(1) == fwd["name"]:
                self._backward_feed.append(("saved", int(saved.group(2))))
            elif seed and seed.group(1) == fwd["name"]:
                self._backward_feed.append(("seed", int(seed.group(2))))
                seeds.append(int(seed.group(2)))
            elif i["name"] in self._input_index:
                self._backward_feed.append(("input", self._input_index[i["name"]]))
            else:
                raise ValueError(f"{backward_so}: input '{i['name']}' comes from neither "
                                 f"'{fwd['name']}' nor its inputs")
        self._result_outputs = sorted(set(seeds))
        # Trained leaves that are weights of the models: the module's parameters.
        weights = set(self._forward_model.weight_names())
        self._param_names = [g["input"] for g in grads if g["input"] in weights]
        self._param_index = {name: k for k, name in enumerate(self._param_names)}
        self._backward_weights = set(self._backward_model.weight_names())
        self.params = torch.nn.ParameterList(
            torch.nn.Parameter(self._forward_model.read_weight(name).clone())
            for name in self._param_names)

    def parameter_names(self):
        """The manifest name of each of `parameters()`, in order."""
        return list(self._param_names)

    def _write_parameters(self, params):
        for name, p in zip(self._param_names, params):
            self._forward_model.write_weight(name, p)
            if name in self._backward_weights:
                self._backward_model.write_weight(name, p)

    def forward(self, *inputs):
        if len(inputs) != self._num_user_inputs:
            raise TypeError(f"takes {self._num_user_inputs} tensors, got {len(inputs)}")
        return _Step.apply(self, *inputs, *self.params)


def load_trainable(forward_so, backward_so):
    """Loads a forward graph's model and its backward graph's model (both
    built by `dynoc build` from one capture) as a trainable torch module."""
    return TrainableModel(forward_so, backward_so)
