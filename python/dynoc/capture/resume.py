"""Graph breaks in the same process (docs/capture.md, "Graph breaks in the
same process"): a variant whose region breaks runs as

    the graph before its first break (built, as any variant's graph),
    the call that broke, natively, on values rebuilt from that graph's
    outputs and the region's arguments,
    a resume function: the region function's own code, entered after that
    call with the frame's stack and locals as arguments, itself a region
    (compiled on its first call, with its own breaks resumed the same way).

The break is resumed at the region function's own frame (at a call, or at a
branch on a tensor: the condition is computed by the graph, its truth read
natively, and each side has a resume function of its own); when it happens in
a function the region calls (a submodule's forward, say), the whole call of
it from the region function runs natively, as Dynamo does. The evaluator
keeps that frame's state while it is inside a CALL or at a conditional jump
on a tensor (`break_snapshot`); a break anywhere else, or one in a loop or a
try block, leaves the variant eager, with the reason logged.
"""
import dis
import opcode
import sys
import types

import torch

from .graph import Graph
from .guards import compile_source

_NULL = object()  # a NULL stack slot (beside a callable, for CALL)
# Objects that mean the same wherever they are used again: kept by reference.
_STABLE = (types.FunctionType, types.BuiltinFunctionType, types.ModuleType, type)
_SCALARS = (bool, int, float, complex, str, bytes, type(None), type(Ellipsis))


class NotResumable(Exception):
    """Why a break cannot be resumed after (the variant runs eagerly)."""


class ResumePoint:
    """What a variant's first break leaves to resume from: the graph and how
    many of its nodes come before the breaking call, the graph values the
    frame still holds (outputs of that prefix), and how to rebuild the
    frame's stack and locals."""

    def __init__(self, code, snap, graph, nodes, values, stack, locals_, line, condition=None):
        self.code = code
        self.pc, self.next = snap["pc"], snap["next"]
        self.nargs, self.kwnames = snap["nargs"], snap["kwnames"]
        self.graph, self.nodes, self.values = graph, nodes, values
        self.stack, self.locals = stack, locals_
        self.line = line
        # A conditional jump on a tensor (its condition already off the
        # stack): the recipe of the condition, where it jumps, and when.
        self.condition = condition
        self.target, self.jump_if_true = (snap["jump"][1], snap["jump"][2]) \
            if "jump" in snap else (None, None)
        if "jump" in snap:  # the instruction after the jump (3.13: the jump
            self.next = snap["jump"][3]  # follows the TO_BOOL that broke)


class _Describer:
    """Turns a frame's objects into recipes that rebuild them in a later call:
    ("out", i) the prefix graph's output i, ("src", f) a source evaluated on
    (L, G), ("const", v), ("null",), ("tuple"/"list", items),
    ("method", recipe of self, name)."""

    def __init__(self, tracker, graph, nodes, L, G):
        self.tracker, self.graph, self.L, self.G = tracker, graph, L, G
        self.produced = {r.vid for n in graph.nodes[:nodes] for r in n.results} \
            if graph is not None else set()
        self.values = []

    def __call__(self, obj, source=""):
        if isinstance(obj, torch.Tensor):
            v = self.tracker.values.get(id(obj))
            if v is not None and v.kind is None:  # a node's result
                if v.vid not in self.produced:
                    raise NotResumable("a tensor the region computed outside the graph "
                                       "before the break is live there")
                if obj.requires_grad and torch.is_grad_enabled():
                    raise NotResumable("a tensor live at the break requires grad (a "
                                       "region with breaks is compiled under no_grad)")
                if v not in self.values:
                    self.values.append(v)
                return ("out", self.values.index(v))
        if source and source.startswith(("L[", "G[")):
            recipe = self._source(obj, source)
            if recipe is not None:
                return recipe
        if isinstance(obj, torch.Tensor):
            raise NotResumable("a tensor with no source the graph knows is live at the break")
        if isinstance(obj, (types.BuiltinMethodType, types.MethodWrapperType)) and \
                not isinstance(obj.__self__, (types.ModuleType, type(None))):
            return ("method", self(obj.__self__), obj.__name__)  # x.item, say
        if isinstance(obj, types.MethodType):
            return ("bound", self(obj.__self__), obj.__func__)
        if type(obj) in _SCALARS or isinstance(obj, _STABLE) or \
                type(obj) is torch.Size or isinstance(obj, (torch.dtype, torch.device)):
            return ("const", obj)
        if type(obj) in (tuple, list):
            return (type(obj).__name__, [self(x) for x in obj])
        raise NotResumable(f"a {type(obj).__name__} the region made is live at the break")

    def _source(self, obj, source):
        try:
            fn = compile_source([source])
            now = fn(self.L, self.G)[0]
        except Exception:
            return None
        if now is obj or (type(obj) in _SCALARS and type(now) is type(obj) and now == obj):
            return ("src", fn)
        return None


def at_break(tracker, snapshot):
    """The ResumePoint of a region's first break, from the evaluator's
    snapshot of the region function's frame (None: not inside a CALL)."""
    if snapshot is None:
        raise NotResumable("it is not at a call or a branch on a tensor in the region "
                           "function itself")
    code = tracker.region_code
    if code.co_cellvars or code.co_freevars:
        raise NotResumable(f"{code.co_name} has closure cells")
    if code.co_flags & (inspect_flags()):
        raise NotResumable(f"{code.co_name} is a generator or coroutine")
    mark = snapshot["mark"]
    graph, nodes = mark if mark is not None else (None, 0)
    if graph is not None and graph is not tracker.current:
        raise NotResumable("a graph ended inside the breaking call before the break")
    if tracker.written:
        raise NotResumable(f"it writes {sorted(tracker.written)[0]} before the break")
    if tracker.mutated_inputs:
        raise NotResumable("it changes an input in place before the break")
    if _in_loop(code, snapshot["pc"]):
        raise NotResumable("the break is inside a loop")
    if _in_handler_range(code, snapshot["pc"]):
        # The breaking call runs outside the resumed code: a handler there
        # would not see what it raises.
        raise NotResumable("the break is inside a try or with block")
    L, G = tracker.call_scope
    describe = _Describer(tracker, graph, nodes, L, G)
    stack = [("null",) if not bound else describe(v, src)
             for v, src, bound in snapshot["stack"]]
    locals_ = [describe(v, src) if bound else ("unbound",)
               for v, src, bound in snapshot["locals"]]
    condition = None
    if "jump" in snapshot:
        condition = describe(snapshot["jump"][0])
    elif any(r == ("null",) for r in stack[len(stack) - snapshot["nargs"]:]):
        raise NotResumable("a NULL among the call's arguments")
    for v in describe.values:
        graph.add_output(v)  # the built prefix returns them
    line = code.co_firstlineno
    for start, end, ln in code.co_lines():
        if start <= 2 * snapshot["pc"] < end and ln is not None:
            line = ln
    return ResumePoint(code, snapshot, graph, nodes, list(describe.values), stack,
                       locals_, line, condition)


def inspect_flags():
    import inspect
    return (inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR |
            inspect.CO_ITERABLE_COROUTINE)


def _in_loop(code, pc):
    """Is instruction `pc` inside a loop (between a backward jump and its
    target)? Resuming there would need the loop's iterator (Dynamo refuses
    too)."""
    for ins in dis.get_instructions(code):
        if "JUMP_BACKWARD" in ins.opname or ins.opname == "JUMP_ABSOLUTE":
            target = ins.argval // 2
            if target <= pc <= ins.offset // 2:
                return True
    return False


def prefix_graph(point):
    """The graph of the nodes before the breaking call, returning the values
    the frame holds at the break (a _graph.Graph ready to build)."""
    src = point.graph
    if src is None:  # the break came before any op
        return Graph("before_break", "")
    g = Graph(f"{src.name}_before_break", src.entry)
    g.inputs = list(src.inputs)
    recorded = src.recorded_nodes if src.recorded_nodes is not None else src.nodes
    g.nodes = list(recorded[:point.nodes])
    g.outputs = list(point.values)
    g.guards = [dict(x) for x in src.guards]
    g.output_structure = {"type": "intermediate"}
    g.eliminate_dead_nodes()
    g.order_inputs()
    return g


# --- the resume function -----------------------------------------------------

def inline_cache_entries():
    """Code units of inline cache after each opcode, indexed by opcode."""
    entries = opcode._inline_cache_entries
    if isinstance(entries, dict):  # 3.13: by name
        return [entries.get(opcode.opname[i], 0) for i in range(256)]
    return list(entries)


def _caches(op):
    return inline_cache_entries()[op]


def _instr(name, arg=0):
    """Code units of instruction `name` with `arg` (EXTENDED_ARG prefixes as
    needed) and its inline caches, as bytes."""
    op = opcode.opmap[name]
    out = bytearray()
    exts = []
    a = arg >> 8
    while a:
        exts.append(a & 0xFF)
        a >>= 8
    for e in reversed(exts):
        out += bytes((opcode.opmap["EXTENDED_ARG"], e))
    out += bytes((op, arg & 0xFF))
    out += b"\0\0" * _caches(op)
    return out


def _read_varint(it):
    b = next(it)
    val = b & 63
    while b & 64:
        val <<= 6
        b = next(it)
        val |= b & 63
    return val


def _write_varint(val, first):
    chunks = [val & 63]
    val >>= 6
    while val:
        chunks.append(val & 63)
        val >>= 6
    chunks.reverse()
    out = [c | (64 if i < len(chunks) - 1 else 0) for i, c in enumerate(chunks)]
    if first:
        out[0] |= 128
    return bytes(out)


def _exception_entries(table):
    """(start, length, target, depth_lasti) of each exception-table entry,
    in code units."""
    it = iter(table)
    while True:
        try:
            start = _read_varint(it)
        except StopIteration:
            return
        yield start, _read_varint(it), _read_varint(it), _read_varint(it)


def _in_handler_range(code, pc):
    return any(start <= pc < start + length
               for start, length, _, _ in _exception_entries(code.co_exceptiontable))


def _shift_exception_table(table, units):
    """co_exceptiontable with every entry moved `units` code units later."""
    out = bytearray()
    for start, length, target, depth_lasti in _exception_entries(table):
        out += _write_varint(start + units, True)
        out += _write_varint(length, False)
        out += _write_varint(target + units, False)
        out += _write_varint(depth_lasti, False)
    return bytes(out)


def _no_location(units):
    """Location-table entries for `units` code units with no source line."""
    out = bytearray()
    while units > 0:
        n = min(units, 8)
        out.append(0x80 | (15 << 3) | (n - 1))
        units -= n
    return bytes(out)


def resume_function(point, globals_, at):
    """The region function's code entered at instruction `at`, after the
    breaking call (or jump): its parameters are every local of the original
    (in order) and then the stack's non-NULL items below the call plus the
    call's result (after a jump: the stack's non-NULL items)."""
    code = point.code
    if point.condition is None:
        below = point.stack[:len(point.stack) - point.nargs - 2]
        stack_kinds = [r == ("null",) for r in below] + [False]  # + the call's result
    else:
        stack_kinds = [r == ("null",) for r in point.stack]
    n_locals = len(code.co_varnames)
    passed = [i for i, null in enumerate(stack_kinds) if not null]
    names = tuple(code.co_varnames) + tuple(f"___stack{k}" for k in range(len(passed)))

    def prologue(jump_arg):
        b = bytearray(_instr("RESUME", 0))
        for i, r in enumerate(point.locals):
            if r == ("unbound",):
                b += _instr("DELETE_FAST", i)
        k = 0
        for null in stack_kinds:
            if null:
                b += _instr("PUSH_NULL")
            else:
                b += _instr("LOAD_FAST", n_locals + k)
                b += _instr("DELETE_FAST", n_locals + k)
                k += 1
        return b + _instr("JUMP_FORWARD", jump_arg)

    # JUMP_FORWARD counts from the prologue's end, where the original code
    # starts: its argument is the resume instruction's index there.
    p = prologue(at)
    units = len(p) // 2
    body = bytes(p) + code.co_code
    flags = code.co_flags & ~(0x04 | 0x08)  # CO_VARARGS, CO_VARKEYWORDS
    name = f"dynoc_resume_in_{_original_name(code.co_name)}_at_{point.line}" + \
        ("" if at == point.next else "_jump")
    new = code.replace(
        co_code=body, co_varnames=names, co_argcount=len(names), co_posonlyargcount=0,
        co_kwonlyargcount=0, co_nlocals=len(names), co_flags=flags,
        co_stacksize=code.co_stacksize + 2, co_name=name,
        co_exceptiontable=_shift_exception_table(code.co_exceptiontable, units),
        co_linetable=_no_location(units) + code.co_linetable,
        **({"co_qualname": name} if sys.version_info >= (3, 11) else {}))
    return types.FunctionType(new, globals_, name)


def _original_name(name):
    """The function's name behind resume functions' names."""
    while name.startswith("dynoc_resume_in_") and "_at_" in name:
        name = name[len("dynoc_resume_in_"):name.rindex("_at_")]
    return name


def rebuild(recipe, outputs, L, G):
    """The object a recipe (_Describer) stands for, in this call."""
    kind = recipe[0]
    if kind == "out":
        return outputs[recipe[1]]
    if kind == "src":
        return recipe[1](L, G)[0]
    if kind == "const":
        return recipe[1]
    if kind == "null":
        return _NULL
    if kind == "tuple":
        return tuple(rebuild(r, outputs, L, G) for r in recipe[1])
    if kind == "list":
        return [rebuild(r, outputs, L, G) for r in recipe[1]]
    if kind == "method":
        return getattr(rebuild(recipe[1], outputs, L, G), recipe[2])
    if kind == "bound":
        return types.MethodType(recipe[2], rebuild(recipe[1], outputs, L, G))
    raise AssertionError(f"unknown recipe {kind}")


def call_on_stack(stack, nargs, kwnames):
    """Runs the CALL whose operands end `stack` (CPython's layouts: [NULL,
    callable, args] on 3.11/3.12, [callable, NULL, args] on 3.13, [method,
    self, args]); returns the stack below them and the call's result."""
    base = len(stack) - nargs
    first, second, args = stack[base - 2], stack[base - 1], list(stack[base:])
    if first is _NULL:
        fn = second
    elif second is _NULL:
        fn = first
    else:
        fn, args = first, [second] + args
    kwargs = {}
    if kwnames:
        k = len(kwnames)
        kwargs = dict(zip(kwnames, args[len(args) - k:]))
        args = args[:len(args) - k]
    return stack[:base - 2], fn(*args, **kwargs)
