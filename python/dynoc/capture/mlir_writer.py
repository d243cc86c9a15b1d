"""Writes recorded graphs as `aten`-dialect MLIR (docs/graph-format.md).

Attribute encodings mirror lib/ir/tools/gen_aten_ops.py (ARG_ATTRS); `dynoc capture`
verifies every file it writes against the dialect, so the two cannot drift apart
silently.
"""
import os
import re
import json
import math
import struct

import torch

DTYPES = {
    torch.float32: "f32", torch.float64: "f64", torch.float16: "f16",
    torch.bfloat16: "bf16", torch.int64: "i64", torch.int32: "i32",
    torch.int16: "i16", torch.int8: "i8", torch.uint8: "ui8", torch.bool: "i1",
}
# Argument names the generator renames (they clash with ODS/C++ names).
RESERVED = {"operands", "results", "attributes", "operation", "context", "location",
            "default", "float", "int", "bool", "operator", "type", "result", "out"}


class Unencodable(Exception):
    """An argument or dtype the aten dialect has no encoding for."""


# In an installed wheel the op list is package data; in a checkout, the source.
_HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the package
_ATEN_OPS_TD = os.path.join(_HERE, "_data", "AtenOps.td")
if not os.path.exists(_ATEN_OPS_TD):
    _ATEN_OPS_TD = os.path.join(_HERE, "..", "..", "lib", "ir", "include", "dynoc", "IR",
                                "AtenOps.td")
_known_ops = None


def check_op(name):
    """Raises Unencodable unless `name` (aten.add.Tensor) is an op of the aten
    dialect (lib/ir/include/dynoc/IR/AtenOps.td, generated)."""
    global _known_ops
    if _known_ops is None:
        try:
            with open(_ATEN_OPS_TD) as f:
                _known_ops = set(re.findall(r'Aten_Op<"([^"]+)"', f.read()))
        except OSError:
            _known_ops = set()  # no list to check against: the verifier will
    if _known_ops and name[len("aten."):] not in _known_ops:
        raise Unencodable(f"{name} is not an op of the aten dialect")


def element_type(dtype):
    try:
        return DTYPES[dtype]
    except KeyError:
        raise Unencodable(f"dtype {dtype} has no MLIR element type in dynoc yet")


def tensor_type(shape, dtype):
    dims = "x".join("?" if d is None else str(d) for d in shape)
    return f"tensor<{dims + 'x' if dims else ''}{element_type(dtype)}>"


def attr_name(name):
    return name + "_" if name in RESERVED or name[:1].isupper() else name


def float_literal(v):
    """A float as MLIR spells it: the mantissa needs a '.' (1e-05 -> 1.0e-05);
    inf/nan as their bit pattern."""
    v = float(v)
    if v != v or v in (float("inf"), float("-inf")):
        return "0x%016X" % struct.unpack("<Q", struct.pack("<d", v))[0]
    text = repr(v)
    mantissa, _, exponent = text.partition("e")
    if "." not in mantissa:
        mantissa += ".0"
    return mantissa + ("e" + exponent if exponent else "")


def float_attr(v):
    return float_literal(v) + " : f64"


def scalar_attr(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return f"{v} : i64"
    if isinstance(v, float):
        return float_attr(v)
    raise Unencodable(f"scalar {v!r} of type {type(v).__name__}")


def string_attr(s):
    return json.dumps(str(s))


def encode_attr(type_str, v):
    """Encodes a non-tensor ATen argument of schema type `type_str`."""
    t = type_str.rstrip("?")
    if t in ("int", "SymInt"):
        return f"{int(v)} : i64"
    if t == "float":
        return float_attr(float(v))
    if t == "bool":
        return "true" if v else "false"
    if t == "str":
        return string_attr(v)
    if t == "Scalar":
        return scalar_attr(v)
    if t == "ScalarType":
        return element_type(v)
    if t in ("Layout", "Device", "MemoryFormat"):
        return string_attr(v)
    if t.startswith(("int[", "SymInt[")):
        vals = [int(x) for x in (v if isinstance(v, (list, tuple)) else [v])]
        return "array<i64" + (": " + ", ".join(map(str, vals)) if vals else "") + ">"
    if t.startswith("float["):
        return "array<f64" + (": " + ", ".join(float_literal(x) for x in v) if v else "") + ">"
    if t.startswith("bool["):
        return "array<i1" + (": " + ", ".join("true" if x else "false" for x in v) if v else "") + ">"
    raise Unencodable(f"argument type {type_str}")


def dict_attr(d):
    return "{" + ", ".join(f"{k} = {v}" for k, v in d.items()) + "}"


def write_module(graphs, weights_file):
    """Returns the text of a module holding `graphs` (list of _graph.Graph)."""
    out = ["module attributes {dynoc.version = 1 : i64} {"]
    for g in graphs:
        out.extend(write_func(g, weights_file))
    out.append("}")
    return "\n".join(out) + "\n"


def write_func(g, weights_file):
    names = {}
    args = []
    for i, inp in enumerate(g.inputs):
        names[inp.vid] = f"%arg{i}"
        args.append(f"%arg{i}: {tensor_type(inp.shape, inp.dtype)}")
    results = [tensor_type(v.shape, v.dtype) for v in g.outputs]
    inputs_attr = "[" + ", ".join(
        dict_attr({"kind": string_attr(i.kind), "name": string_attr(i.name)}) for i in g.inputs) + "]"
    guards = []
    for guard in g.guards:
        d = {"kind": string_attr(guard["kind"]), "text": string_attr(guard["text"])}
        if guard["kind"] == "tensor_match":
            d["input"] = f"{guard['input']} : i64"
            d["dtype"] = element_type(guard["dtype"])
            # None (a dynamic dim) is -1, as the runtime's guard check reads it.
            d["sizes"] = encode_attr("int[]", [-1 if x is None else x for x in guard["sizes"]])
            d["strides"] = encode_attr("int[]", [-1 if x is None else x for x in guard["strides"]])
            d["requires_grad"] = "true" if guard["requires_grad"] else "false"
            d["device"] = string_attr(guard["device"])
        elif guard["kind"] == "size":
            d["terms"] = encode_attr("int[]", guard["terms"])
            d["constant"] = f"{guard['constant']} : i64"
            d["op"] = string_attr(guard["op"])
        guards.append(dict_attr(d))
    fattrs = {
        "dynoc.entry": string_attr(g.entry),
        "dynoc.inputs": inputs_attr,
        "dynoc.outputs": string_attr(json.dumps(g.output_structure)),
        "dynoc.guards": "[" + ", ".join(guards) + "]",
    }
    if g.mutations:
        fattrs["dynoc.mutations"] = string_attr(json.dumps(g.mutations))
    if g.kind != "forward":
        fattrs["dynoc.kind"] = string_attr(g.kind)
    if g.grads:
        fattrs["dynoc.grads"] = string_attr(json.dumps(g.grads))
    if any(i.kind != "user" for i in g.inputs):
        fattrs["dynoc.weights"] = string_attr(weights_file)
    res = results[0] if len(results) == 1 else "(" + ", ".join(results) + ")"
    lines = [f"  func.func @{g.name}({', '.join(args)}) -> {res if results else '()'} "
             f"attributes {dict_attr(fattrs)} {{"]
    counter = 0
    for node in g.nodes:
        res_names = []
        for r in node.results:
            names[r.vid] = f"%{counter}"
            res_names.append(f"%{counter}")
            counter += 1
        operands = [names[v.vid] for v in node.operands]
        operand_types = [tensor_type(v.shape, v.dtype) for v in node.operands]
        result_types = [tensor_type(v.shape, v.dtype) for v in node.results]
        attrs = dict(node.attrs)
        if node.segment_sizes is not None:
            attrs["operand_segment_sizes"] = "array<i32: " + ", ".join(map(str, node.segment_sizes)) + ">"
        lhs = ", ".join(res_names) + " = " if res_names else ""
        attr_text = " " + dict_attr(attrs) if attrs else ""
        rt = result_types[0] if len(result_types) == 1 else "(" + ", ".join(result_types) + ")"
        lines.append(f"    {lhs}\"{node.op}\"({', '.join(operands)}){attr_text} : "
                     f"({', '.join(operand_types)}) -> {rt}")
    ret = [names[v.vid] for v in g.outputs]
    if ret:
        lines.append(f"    return {', '.join(ret)} : {', '.join(results)}")
    else:
        lines.append("    return")
    lines.append("  }")
    return lines
