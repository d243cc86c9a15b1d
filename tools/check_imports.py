#!/usr/bin/env python3
"""The `dynoc` Python package's import structure (issue 50): the import
cycles among its modules, and the imports of package modules made inside
functions (most of them dodge a cycle). Reads the sources only (nothing is
imported).

  tools/check_imports.py            print the cycles and the in-function imports;
                                    exit 1 if either count is over its bound
  tools/check_imports.py --graph    also print every module's package imports

The bounds below are a ratchet: CI runs this, so the structure cannot get
worse; lower them as modules move into their floors (capture/, jit/,
runtime/), down to no cycle at all.
"""
import ast
import pathlib
import sys

PACKAGE = pathlib.Path(__file__).resolve().parent.parent / "lib" / "capture" / "python" / "dynoc"
# The largest import cycle (modules in one strongly connected component) and
# the count of in-function imports of package modules allowed today.
MAX_CYCLE = 0
MAX_LOCAL = 0


def package_imports(path, modules):
    """[(module imported, inside a function?)] of one source file: relative
    imports of the package's own modules."""
    found = []

    def visit(node, in_function):
        for child in ast.iter_child_nodes(node):
            inside = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                       ast.Lambda))
            if isinstance(child, ast.ImportFrom) and child.level == 1:
                names = [child.module] if child.module else [a.name for a in child.names]
                for n in names:
                    if n.split(".")[0] in modules:
                        found.append((n.split(".")[0], in_function))
            visit(child, inside)
    visit(ast.parse(path.read_text(), str(path)), False)
    return found


def cycles(edges):
    """The strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def strong(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))
    sys.setrecursionlimit(10000)
    for v in sorted(edges):
        if v not in index:
            strong(v)
    return out


def main(argv):
    modules = {p.stem: p for p in PACKAGE.glob("*.py")}
    edges, local = {}, []
    for name, path in sorted(modules.items()):
        for target, in_function in package_imports(path, modules):
            if target == name:
                continue
            edges.setdefault(name, set()).add(target)
            if in_function:
                local.append((name, target))
    if "--graph" in argv:
        for name in sorted(edges):
            print(f"{name} -> {', '.join(sorted(edges[name]))}")
    found = cycles(edges)
    largest = max((len(c) for c in found), default=0)
    for c in found:
        print(f"cycle of {len(c)} modules: {', '.join(c)}")
    print(f"in-function imports of package modules: {len(local)}")
    for name, target in sorted(local):
        print(f"  {name} imports {target} inside a function")
    bad = []
    if largest > MAX_CYCLE:
        bad.append(f"an import cycle of {largest} modules (at most {MAX_CYCLE} allowed)")
    if len(local) > MAX_LOCAL:
        bad.append(f"{len(local)} in-function imports (at most {MAX_LOCAL} allowed)")
    for b in bad:
        print(f"tools/check_imports.py: {b}: see issue 50 and docs/capture.md", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
