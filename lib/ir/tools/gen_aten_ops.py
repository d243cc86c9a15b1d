#!/usr/bin/env python3
"""Generates AtenOps.td, the ODS of the `aten` dialect, from PyTorch's registry.

Input: torchgen's packaged native_functions.yaml (inside the torch wheel) and
aten_ops.txt (which overloads beyond the `core`-tagged ones). One op per ATen
overload, named after it: `aten.add.Tensor`, `aten.relu`. Tensor arguments become
ranked-tensor operands; everything else becomes an attribute (see ARG_ATTRS).

Usage: gen_aten_ops.py [--yaml PATH] [--ops aten_ops.txt] [-o AtenOps.td] [--check]
"""
import argparse
import os
import re
import sys

import yaml

# ATen argument type -> ODS attribute constraint. The capture recorder writes the same
# encodings (python/dynoc/capture/mlir_writer.py); the verifier keeps both honest.
ARG_ATTRS = {
    "int": "I64Attr",
    "SymInt": "I64Attr",
    "float": "F64Attr",
    "bool": "BoolAttr",
    "str": "StrAttr",
    "Scalar": "AnyAttrOf<[I64Attr, F64Attr, BoolAttr]>",
    "ScalarType": "TypeAttr",
    "Layout": "StrAttr",
    "Device": "StrAttr",
    "MemoryFormat": "StrAttr",
    "int[]": "DenseI64ArrayAttr",
    "SymInt[]": "DenseI64ArrayAttr",
    "float[]": "DenseF64ArrayAttr",
    "bool[]": "DenseBoolArrayAttr",
    "Scalar[]": "ArrayAttr",
}
# Arguments that carry no value a compiled graph can use; dropped from the op.
DROPPED_ARGS = {"Generator"}
RESULT_TYPES = {
    "Tensor": "AnyRankedTensor",
    "int": "I64",
    "SymInt": "I64",
    "float": "F64",
    "bool": "I1",
    "Scalar": "AnyType",
}
# Names ODS or C++ would reject as accessors.
RESERVED = {"operands", "results", "attributes", "operation", "context", "location",
            "default", "float", "int", "bool", "operator", "type", "result", "out"}


def parse_type(t):
    """Splits an ATen type into (base, optional, list) with alias info removed."""
    t = re.sub(r"\([^)]*\)", "", t).strip()
    optional = t.endswith("?")
    t = t.rstrip("?")
    m = re.fullmatch(r"(.+)\[(\d*)\](\?)?", t)
    if m:
        inner = m.group(1)
        inner_opt = inner.endswith("?")
        return inner.rstrip("?") + "[]", optional, inner_opt
    return t, optional, False


def split_args(s):
    out, depth, cur = [], 0, ""
    for ch in s:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


class Skip(Exception):
    pass


def camel(s):
    return "".join(p[:1].upper() + p[1:] for p in re.split(r"[._]", s) if p)


def op_from_schema(schema, tags):
    m = re.fullmatch(r"([\w.]+)\((.*)\) -> (.*)", schema)
    if not m:
        raise Skip("unparsed schema")
    full_name, args_s, rets_s = m.groups()
    name, _, overload = full_name.partition(".")
    mnemonic = name + ("." + overload if overload else "")
    operands, attrs = [], []
    for a in split_args(args_s):
        if a == "*":
            continue
        typ, _, rest = a.rpartition(" ")
        argname = rest.split("=")[0]
        has_default = "=" in rest
        base, optional, inner_opt = parse_type(typ)
        if argname in RESERVED or argname[:1].isupper():
            argname = argname + "_"
        if base in DROPPED_ARGS:
            continue
        if base == "Tensor":
            operands.append(("Optional<AnyRankedTensor>" if optional else "AnyRankedTensor", argname, optional))
        elif base == "Tensor[]":
            if optional:
                raise Skip("optional tensor list")
            operands.append(("Variadic<AnyRankedTensor>", argname, True))
            if inner_opt:
                # Tensor?[]: the positions that are None go in an attribute.
                attrs.append(("OptionalAttr<DenseI64ArrayAttr>", argname + "_none"))
        elif base in ARG_ATTRS:
            c = ARG_ATTRS[base]
            if inner_opt:
                raise Skip("list of optionals: " + typ)
            attrs.append((f"OptionalAttr<{c}>" if optional or has_default else c, argname))
        else:
            raise Skip("argument type " + typ)
    rets_s = rets_s.strip()
    if rets_s.startswith("(") and rets_s.endswith(")"):
        rets = split_args(rets_s[1:-1])
    else:
        rets = [rets_s]
    results = []
    for i, r in enumerate(rets):
        if not r:
            continue
        parts = r.split(" ")
        base, optional, _ = parse_type(parts[0])
        rname = parts[1] if len(parts) > 1 else ("result" if len(rets) == 1 else f"result{i}")
        taken = {n for _, n, _ in operands} | {n for _, n in attrs}
        if rname in ("self", "operands", "results") or rname in taken:
            rname = rname + "_result"
        if base == "Tensor[]":
            results.append(("Variadic<AnyRankedTensor>", rname))
        elif base in RESULT_TYPES and not optional:
            results.append((RESULT_TYPES[base], rname))
        else:
            raise Skip("result type " + r)
    if sum(1 for r in results if r[0].startswith("Variadic")) > 1:
        raise Skip("several variadic results")
    mutates = "!" in schema
    seeded = "nondeterministic_seeded" in tags
    return dict(mnemonic=mnemonic, schema=schema, operands=operands, attrs=attrs,
                results=results, pure=not mutates and not seeded)


def render(op):
    traits = []
    if op["pure"]:
        traits.append("Pure")
    n_flexible = sum(1 for o in op["operands"] if o[2])
    if n_flexible > 1:
        traits.append("AttrSizedOperandSegments")
    # A window's stride comes with a padding (as_strided's are memory strides,
    # which may be 0).
    names = {n for _, n in op["attrs"]}
    if names & {"kernel_size", "dilation"} or {"stride", "padding"} <= names:
        traits.append("Aten_WindowAttrs")
    cls = "Aten" + ("_" if op["mnemonic"].startswith("_") else "") + camel(op["mnemonic"]) + "Op"
    args = [f"{t}:${n}" for t, n, _ in op["operands"]] + [f"{t}:${n}" for t, n in op["attrs"]]
    res = [f"{t}:${n}" for t, n in op["results"]]
    lines = [f'def {cls} : Aten_Op<"{op["mnemonic"]}", [{", ".join(traits)}]> {{',
             f'  let summary = [{{{op["schema"]}}}];',
             f"  let arguments = (ins {', '.join(args)});",
             f"  let results = (outs {', '.join(res)});"]
    if n_flexible == 0:
        operands = " `,` ".join("$" + n for _, n, _ in op["operands"])
        fmt = (operands + " " if operands else "") + "attr-dict `:` functional-type(operands, results)"
        lines.append(f"  let assemblyFormat = \"{fmt}\";")
    lines.append("}")
    return "\n".join(lines)


def default_yaml():
    import torchgen
    return os.path.join(os.path.dirname(torchgen.__file__), "packaged", "ATen", "native",
                        "native_functions.yaml")


def select(entries, wanted):
    chosen, skipped = [], []
    for e in entries:
        schema = e["func"]
        full = schema.split("(")[0]
        name, _, overload = full.partition(".")
        tags = e.get("tags") or []
        if isinstance(tags, str):
            tags = [tags]
        if overload.endswith("out") or overload.startswith("out") or name.endswith("_out"):
            continue
        # The functional twin torchgen generates for an in-place op (`autogen:
        # zero` beside `zero_`): the same arguments, self read-only, a new result.
        for auto in str(e.get("autogen") or "").split(","):
            auto = auto.strip()
            if auto and auto.split(".")[0] in wanted and not auto.endswith("out") \
                    and name.endswith("_") and name[:-1] == auto.split(".")[0]:
                args = schema[schema.index("(") + 1:schema.rindex(") ->")]
                twin = f"{auto}({args.replace('Tensor(a!) self', 'Tensor self')}) -> Tensor"
                try:
                    chosen.append(op_from_schema(twin, tags))
                except Skip as s:
                    skipped.append((auto, str(s)))
        is_core = "core" in tags
        listed = full in wanted or (name in wanted and not name.endswith("_"))
        if not (is_core or listed):
            continue
        try:
            chosen.append(op_from_schema(schema, tags))
        except Skip as s:
            skipped.append((full, str(s)))
    return chosen, skipped


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--yaml", default=None, help="native_functions.yaml (default: the installed torchgen's)")
    p.add_argument("--ops", default=os.path.join(here, "..", "aten_ops.txt"))
    p.add_argument("-o", "--output", default=os.path.join(here, "..", "include", "dynoc", "IR", "AtenOps.td"))
    p.add_argument("--check", action="store_true", help="fail if the output is not up to date")
    a = p.parse_args()
    with open(a.yaml or default_yaml()) as f:
        entries = yaml.safe_load(f)
    with open(a.ops) as f:
        wanted = {l.split("#")[0].strip() for l in f} - {""}
    chosen, skipped = select(entries, wanted)
    chosen.sort(key=lambda o: o["mnemonic"])
    names = {o["mnemonic"] for o in chosen}
    missing = sorted(w for w in wanted if w not in names and not any(n.split(".")[0] == w for n in names))
    if missing:
        print("gen_aten_ops: listed in aten_ops.txt but not generated: " + ", ".join(missing), file=sys.stderr)
        for full, why in skipped:
            if full in missing or full.split(".")[0] in missing:
                print(f"  {full}: {why}", file=sys.stderr)
        return 1
    text = ("// Generated by lib/ir/tools/gen_aten_ops.py from native_functions.yaml; do not edit.\n"
            f"// {len(chosen)} ops.\n\n"
            "#ifndef DYNOC_IR_ATENOPS_TD\n#define DYNOC_IR_ATENOPS_TD\n\n"
            "include \"dynoc/IR/AtenBase.td\"\n\n" + "\n\n".join(render(o) for o in chosen) +
            "\n\n#endif // DYNOC_IR_ATENOPS_TD\n")
    if a.check:
        with open(a.output) as f:
            if f.read() != text:
                print(f"gen_aten_ops: {a.output} is stale; run lib/ir/tools/gen_aten_ops.py", file=sys.stderr)
                return 1
        return 0
    with open(a.output, "w") as f:
        f.write(text)
    print(f"gen_aten_ops: wrote {len(chosen)} ops to {a.output} ({len(skipped)} overloads skipped)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
