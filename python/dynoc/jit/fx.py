"""A recorded graph as a torch.fx.GraphModule, for user backends and the eager
backend (docs/capture.md, "Backends").

Each node of dynoc's recording keeps the ATen call it came from (the overload,
its arguments with tensors as graph Values); the GraphModule calls the same
overloads. Its placeholders are the graph's user inputs, in the graph's order;
its weights (parameters, buffers, constants) are attributes of the module that
share memory with the program's tensors; it returns the graph's outputs as a
tuple. This is dynoc's recording handed over in torch's format: no Dynamo, no
fx tracing is involved in making it.
"""
import operator

import torch

from ..capture.graph import Value


class NotConvertible(Exception):
    """The graph holds something a GraphModule cannot say."""


def _returns_one_tensor(func):
    returns = func._schema.returns
    return len(returns) == 1 and str(returns[0].type) == "Tensor"


def graph_module(graph, weights, result_structure=None):
    """(torch.fx.GraphModule, names of its placeholders) of `graph` (a
    _graph.Graph) whose non-user inputs are `weights` (name -> tensor). It
    returns the graph's outputs as a tuple, or in `result_structure` (the
    region's result, by output index) when given."""
    fx = torch.fx.Graph()
    root = torch.nn.Module()
    env = {}
    attrs = {}

    def attribute(tensor, hint):
        key = id(tensor)
        if key not in attrs:
            name = f"_w{len(attrs)}_{''.join(c if c.isalnum() else '_' for c in hint)[:40]}"
            root.register_buffer(name, tensor, persistent=False)
            attrs[key] = name
        return fx.get_attr(attrs[key])

    placeholders = []
    for i, v in enumerate(graph.inputs):
        if v.kind == "user":
            name = f"arg{len(placeholders)}"
            env[v.vid] = fx.placeholder(name)
            placeholders.append(v.name)
        else:
            env[v.vid] = attribute(weights[v.name].detach(), v.name)

    def mapped(obj):
        if isinstance(obj, Value):
            if obj.vid not in env:
                raise NotConvertible(f"a value of {graph.name} is used before it is made")
            return env[obj.vid]
        if isinstance(obj, torch.Tensor):  # a tensor the recording kept as is
            return attribute(obj.detach(), "constant")
        if isinstance(obj, (list, tuple)):
            return type(obj)(mapped(x) for x in obj)
        if isinstance(obj, dict):
            return {k: mapped(x) for k, x in obj.items()}
        if isinstance(obj, torch.Generator):
            raise NotConvertible("a random op with its own generator")
        return obj

    for node in graph.nodes:
        if node.call is None:
            raise NotConvertible(f"node {node.op} has no recorded call")
        func, args, kwargs = node.call
        out = fx.call_function(func, mapped(tuple(args)), mapped(dict(kwargs)))
        if _returns_one_tensor(func):
            env[node.results[0].vid] = out
        else:
            for k, r in enumerate(node.results):
                env[r.vid] = fx.call_function(operator.getitem, (out, k))
    outputs = [mapped(v) for v in graph.outputs]
    fx.output(_shaped(result_structure, outputs) if result_structure else tuple(outputs))
    return torch.fx.GraphModule(root, fx), placeholders


def _shaped(s, outputs):
    """The graph's outputs in the region's result structure `s` (a tensor, or
    tuples, lists and dicts of them and of constants), as Dynamo's export
    returns them."""
    kind = s.get("type")
    if kind == "tensor":
        return outputs[s["index"]]
    if kind == "constant":
        return s["value"]
    if kind == "dict":
        return {k: _shaped(v, outputs) for k, v in s["items"].items()}
    if kind in ("tuple", "list"):
        items = [_shaped(v, outputs) for v in s["items"]]
        return items if kind == "list" else tuple(items)
    raise NotConvertible(f"a result of type {s.get('python_type', kind)}")
