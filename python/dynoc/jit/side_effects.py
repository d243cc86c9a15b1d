"""A compiled call's Python side effects, replayed after its built graph runs
(docs/capture.md, "Results and side effects"): each lasting write the capture
saw (capture/results.py) is made again, in the order the call first made
them, with its value rebuilt from this call's graph outputs and arguments."""
import ast

from ..capture.guards import compile_source
from ..runtime.model import _rebuild


class CannotReplay(Exception):
    """A write whose target is no attribute, item or global assignment."""


def _setter(target):
    """(a function of (L, G) returning the object written into, how to write:
    ("attr", name) or ("item", a function of (L, G) returning the key))."""
    try:
        node = ast.parse(target, mode="eval").body
    except SyntaxError as e:
        raise CannotReplay(f"{target} is no Python expression") from e
    if isinstance(node, ast.Attribute):
        return compile_source([ast.unparse(node.value)]), ("attr", node.attr)
    if isinstance(node, ast.Subscript):
        return (compile_source([ast.unparse(node.value)]),
                ("item", compile_source([ast.unparse(node.slice)])))
    raise CannotReplay(f"{target} is no attribute or item")


class SideEffects:
    """Called with (outputs, arguments, refs, L, G) after the graph ran."""

    def __init__(self, effects):
        self.writes = [(e["target"], e["value"]) + _setter(e["target"]) for e in effects]

    def __bool__(self):
        return bool(self.writes)

    def descriptions(self):
        return [value for _, value, _, _ in self.writes]

    def __call__(self, outputs, arguments, refs, L, G):
        for _, value, owner, (how, name) in self.writes:
            new = _rebuild(value, outputs, arguments, refs)
            obj = owner(L, G)[0]
            if how == "attr":
                setattr(obj, name, new)
            else:
                obj[name(L, G)[0]] = new
