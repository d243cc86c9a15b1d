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
    """Called with (outputs, arguments, refs, L, G) after the graph ran:
    writes made again, and container methods (`acc.append(t)`) called again
    with their arguments rebuilt, in the order the capture saw them."""

    def __init__(self, effects):
        self.writes = []  # (descriptions, how to make it again)
        for e in effects:
            if "call" in e:
                container = compile_source([e["target"]])
                self.writes.append((e["args"], ("call", container, e["call"])))
            else:
                owner, (how, name) = _setter(e["target"])
                self.writes.append(([e["value"]], (how, owner, name)))

    def __bool__(self):
        return bool(self.writes)

    def descriptions(self):
        return [d for values, _ in self.writes for d in values]

    def __call__(self, outputs, arguments, refs, L, G):
        for values, (how, owner, name) in self.writes:
            new = [_rebuild(v, outputs, arguments, refs) for v in values]
            obj = owner(L, G)[0]
            if how == "call":
                getattr(obj, name)(*new)
            elif how == "attr":
                setattr(obj, name, new[0])
            else:
                obj[name(L, G)[0]] = new[0]
