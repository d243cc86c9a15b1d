"""What a region's call leaves behind besides its graphs, described so a
compiled call can make it again from the graph's outputs (docs/capture.md,
"Results and side effects"):

- its result: tensors (graph outputs, or the call's own arguments), tuples,
  lists, dicts, dataclasses (ModelOutput) and plain Python objects that hold
  them (a transformers DynamicCache), rebuilt as new objects of their class
  with the same attributes, as Dynamo reconstructs the objects a frame makes;
- its lasting writes (side effects): an attribute, item or global the call
  assigned and did not restore, with the value it holds at the end (a cache
  passed in whose layers now hold longer tensors), replayed after the graph.

A description is JSON (it goes into the manifest); Python values JSON cannot
hold (a class, a torch.device, a function) are "python" entries indexing the
Describer's `refs`, so only the process that captured them rebuilds them.
"""
import dataclasses
import enum
import types

import torch

# Values a description holds by reference: immutable, or one object a
# program means by identity.
_BY_REFERENCE = (types.FunctionType, types.BuiltinFunctionType, types.MethodType,
                 types.ModuleType, type, torch.dtype, torch.device, enum.Enum)
_MAX_DEPTH = 8  # objects inside objects, deeper than this: opaque


class Describer:
    """Describes Python values of one region's call. `graph_value(tensor)`:
    (graph, output index) of a tensor a graph computed, or None; `inputs`:
    [(source, tensor)] of the call's tensor arguments; `arguments`: [(source,
    value)] of every argument (an object passed in and returned, or written
    into, is that argument, not a copy)."""

    def __init__(self, graph_value, inputs, arguments):
        self.graph_value = graph_value
        self.inputs = inputs
        self.arguments = arguments
        self.refs = []
        self._paths = None  # id -> source inside the arguments, found at the first need

    def _ref(self, obj):
        for k, r in enumerate(self.refs):
            if r is obj:
                return k
        self.refs.append(obj)
        return len(self.refs) - 1

    def __call__(self, obj, depth=0):
        if isinstance(obj, torch.Tensor):
            out = self.graph_value(obj)
            if out is None:
                src = next((s for s, t in self.inputs if t is obj), None)
                if src is None:  # held by an argument the graph did not read
                    if self._paths is None:
                        self._paths = paths_from(dict(self.arguments))
                    src = self._paths.get(id(obj))
                return {"type": "input_or_constant", **({"source": src} if src else {})}
            graph, index = out
            return {"type": "tensor", "graph": graph, "index": index}
        if obj is None or isinstance(obj, (bool, int, float, str)):
            return {"type": "constant", "value": obj}
        if depth > _MAX_DEPTH:
            return {"type": "opaque", "python_type": type(obj).__name__}
        if isinstance(obj, (tuple, list)):  # a namedtuple or torch.Size: a tuple
            kind = "list" if isinstance(obj, list) else "tuple"
            return {"type": kind, "items": [self(x, depth + 1) for x in obj]}
        if isinstance(obj, dict) and not dataclasses.is_dataclass(obj):
            return {"type": "dict", "items": {str(k): self(x, depth + 1) for k, x in obj.items()}}
        if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
            # ModelOutput-style results: rebuilt by class and field names.
            cls = type(obj)
            return {"type": "dataclass", "python_type": f"{cls.__module__}.{cls.__qualname__}",
                    "items": {f.name: self(getattr(obj, f.name), depth + 1)
                              for f in dataclasses.fields(obj)}}
        if isinstance(obj, _BY_REFERENCE):
            return {"type": "python", "ref": self._ref(obj), "python_type": type(obj).__name__}
        src = next((s for s, v in self.arguments if v is obj), None)
        if src is not None:
            return {"type": "input_or_constant", "source": src}
        return self._object(obj, depth)

    def _object(self, obj, depth):
        """A plain Python object (its state all in __dict__): made again as a
        new object of its class with the same attributes."""
        cls = type(obj)
        state = getattr(obj, "__dict__", None)
        plain = type(state) is dict and cls.__new__ is object.__new__ and \
            not any(vars(c).get("__slots__") for c in cls.__mro__[:-1]) and \
            not isinstance(obj, torch.nn.Module)
        if not plain:
            return {"type": "opaque", "python_type": cls.__name__}
        return {"type": "object", "python_type": f"{cls.__module__}.{cls.__qualname__}",
                "class": self._ref(cls),
                "items": {k: self(v, depth + 1) for k, v in state.items()}}


def problem(s):
    """Why the description `s` cannot be made again from the graph's outputs,
    or None."""
    kind = s.get("type")
    if kind == "input_or_constant" and "source" not in s:
        return "a tensor the graph did not compute (a constant)"
    if kind in ("opaque", "intermediate"):
        return f"a {s.get('python_type', kind)} object"
    items = s.get("items", ())
    for item in (items.values() if isinstance(items, dict) else items):
        why = problem(item)
        if why:
            return why
    return None


def python_scalar(s):
    """The type of the first Python scalar a description holds (None aside),
    or None. A scalar a call writes may come from reads dynoc does not guard
    (`n = getattr(obj, "n", 0) + 1`), so a side effect holding one is not
    replayed: the next call might write another."""
    if s.get("type") == "constant" and s.get("value") is not None:
        return type(s["value"]).__name__
    items = s.get("items", ())
    for item in (items.values() if isinstance(items, dict) else items):
        found = python_scalar(item)
        if found:
            return found
    return None


def sources(s):
    """The argument sources a description names (made from L and G at run
    time)."""
    if s.get("type") == "input_or_constant" and "source" in s:
        return {s["source"]}
    items = s.get("items", ())
    out = set()
    for item in (items.values() if isinstance(items, dict) else items):
        out |= sources(item)
    return out


_MAX_PATHS = 10000  # objects visited looking for paths


def paths_from(roots, depth=4):
    """{id(object): a source naming it} for the objects `roots` ({source:
    value}) hold within `depth` steps: attributes of plain objects, items of
    lists, tuples and str- or int-keyed dicts (breadth first: the shortest
    path wins). Tensors, modules and classes are not entered."""
    found = {}
    frontier = list(roots.items())
    for _ in range(depth + 1):
        following = []
        for source, obj in frontier:
            if id(obj) in found or len(found) > _MAX_PATHS:
                continue
            found[id(obj)] = source
            if isinstance(obj, (torch.Tensor, str, bytes, int, float, bool, type(None)) +
                          _BY_REFERENCE) or isinstance(obj, torch.nn.Module):
                continue
            if isinstance(obj, (list, tuple)):
                following += [(f"{source}[{k}]", v) for k, v in enumerate(obj)]
            elif isinstance(obj, dict):
                following += [(f"{source}[{k!r}]", v) for k, v in obj.items()
                              if isinstance(k, (str, int))]
            state = getattr(obj, "__dict__", None)
            if type(state) is dict:
                following += [(f"{source}.{k}", v) for k, v in state.items()
                              if isinstance(k, str) and k.isidentifier()]
        frontier = following
    return found
