"""Which ATen ops (with dtypes) real programs record, and which of them the CPU
backend cannot build.

  tools/op_coverage.py DIR [DIR ...] [--corpus] [--markdown FILE]

Reads every graph file (graph_*.mlir) under the DIRs (capture directories, e.g.
the real-program suite's --workdir), optionally capturing the corpus first
(--corpus: test/capture/programs/*.py under `dynoc capture`), and builds each
graph with `dynoc build --emit=cpp`, which names every op and dtype the CPU
backend does not support with its location. Prints one line per (op, dtype):
how many graphs record it and whether it builds. Exit status 1 if any does not.
"""
import argparse
import collections
import os
import pathlib
import re
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
DYNOC = ROOT / "bazel-bin" / "tools" / "dynoc" / "dynoc"

_OP = re.compile(r'"((?:aten|dynoc)\.[\w.]+)"\(.*->\s*(.*)$')
_DTYPE = re.compile(r"tensor<(?:[\d?]+x)*(\w+)>")
_UNSUPPORTED_OP = re.compile(r"op '(aten\.[\w.]+)' is not supported")
_UNSUPPORTED_DTYPE = re.compile(r"'(aten\.[\w.]+)' uses dtype '?(\w+)'?")


def recorded_ops(mlir_text):
    """{(op, dtype of its first result)} of a graph file, as captured."""
    ops = set()
    for line in mlir_text.splitlines():
        m = _OP.search(line)
        if m and m.group(1).startswith("aten."):
            dtypes = _DTYPE.findall(m.group(2))
            ops.add((m.group(1), dtypes[0] if dtypes else "-"))
    return ops


def build_failures(mlir):
    """(ops the backend lacks, (op, dtype) pairs it does not run, other error)."""
    with tempfile.TemporaryDirectory() as tmp:
        p = subprocess.run([str(DYNOC), "build", str(mlir), "--emit=cpp", "-o",
                            os.path.join(tmp, "model.cpp")], capture_output=True, text=True)
    if p.returncode == 0:
        return set(), set(), ""
    ops = set(_UNSUPPORTED_OP.findall(p.stderr))
    dtypes = set(_UNSUPPORTED_DTYPE.findall(p.stderr))
    other = "" if ops or dtypes else next(
        (l for l in p.stderr.splitlines() if "error" in l), p.stderr.strip()[:200])
    return ops, dtypes, other


def capture_corpus(workdir):
    programs = sorted((ROOT / "test" / "capture" / "programs").glob("*.py"))
    for i, prog in enumerate(programs):
        sys.stderr.write(f"\r[op_coverage] capturing the corpus {i + 1}/{len(programs)}")
        subprocess.run([str(DYNOC), "capture", "-o", str(workdir / prog.stem), str(prog)],
                       capture_output=True, text=True, timeout=600)
    sys.stderr.write("\n")
    return workdir


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("dirs", nargs="*", type=pathlib.Path)
    p.add_argument("--corpus", action="store_true", help="capture the corpus first")
    p.add_argument("--markdown", help="also write the table as markdown here")
    a = p.parse_args()
    dirs = list(a.dirs)
    if a.corpus:
        dirs.append(capture_corpus(pathlib.Path(tempfile.mkdtemp(prefix="dynoc-corpus-"))))
    if not dirs:
        p.error("give capture directories, or --corpus")
    graphs = sorted(f for d in dirs for f in d.rglob("graph_*.mlir"))
    seen = collections.Counter()
    missing_ops, missing_dtypes, others = set(), set(), []
    for i, g in enumerate(graphs):
        sys.stderr.write(f"\r[op_coverage] building {i + 1}/{len(graphs)} graphs")
        for key in recorded_ops(g.read_text()):
            seen[key] += 1
        ops, dtypes, other = build_failures(g)
        missing_ops |= ops
        missing_dtypes |= dtypes
        if other:
            others.append(f"{g}: {other}")
    sys.stderr.write("\n")
    rows = []
    for (op, dtype), n in sorted(seen.items()):
        status = ("op not supported" if op in missing_ops else
                  "dtype not supported" if (op, dtype) in missing_dtypes else "builds")
        rows.append((op, dtype, n, status))
    width = max((len(r[0]) for r in rows), default=10)
    for op, dtype, n, status in rows:
        print(f"{op:<{width}}  {dtype:<5} {n:>5} graph(s)  {status}")
    bad = [r for r in rows if r[3] != "builds"]
    print(f"{len(rows)} (op, dtype) pairs in {len(graphs)} graphs; {len(bad)} do not build")
    for line in others:
        print(f"other build error: {line}")
    if a.markdown:
        md = ["| op | dtype | graphs | CPU backend |", "|---|---|---|---|"]
        md += [f"| `{op}` | {dtype} | {n} | {status} |" for op, dtype, n, status in rows]
        pathlib.Path(a.markdown).write_text("\n".join(md) + "\n")
    return 1 if bad or others else 0


if __name__ == "__main__":
    sys.exit(main())
