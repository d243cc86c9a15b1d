"""How `dynoc opt` and `dynoc build` scale with a graph's op count
(docs/reliability.md, "Large graphs").

  bench/reliability/graph_scale.py [--ops 1000,10000,100000] [--full-build-max N]
                                   [--markdown FILE]

Each graph is a synthetic chain on tensor<4x8xf32>: unary ops (relu, neg,
exp, tanh) and adds of the value two back, so fusion groups stay small and
the op count is what the tools see. For each size it times, in a fresh
process each, and with the peak resident memory of the process tree:
`dynoc opt --pass=dynoc-infer-shapes`, `dynoc build --emit=cpp -O2` (every
pass and the printer, no C++ compiler) and the whole `dynoc build` (up to
--full-build-max ops). Prints a markdown table.
"""
import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[2]
DYNOC = ROOT / "bazel-bin" / "tools" / "dynoc" / "dynoc"

# Runs argv and reports its wall time and the peak RSS of it and every
# process it waited for.
_MEASURE = r'''
import json, resource, subprocess, sys, time
t = time.monotonic()
p = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
print(json.dumps({"rc": p.returncode, "seconds": time.monotonic() - t,
                  "rss_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024,
                  "stderr": p.stderr.decode(errors="replace")[-800:]}))
'''


def chain(n):
    ops = ["relu", "neg", "exp", "tanh"]
    t = "tensor<4x8xf32>"
    lines = [f"func.func @g(%x: {t}) -> {t} attributes "
             '{dynoc.inputs = [{kind = "user", name = "x"}]} {']
    names = ["%x", "%x"]
    for i in range(n):
        if i % 3 == 2:
            lines.append(f'  %v{i} = "aten.add.Tensor"({names[-1]}, {names[-3] if len(names) > 2 else names[-1]}) '
                         f"{{alpha = 1 : i64}} : ({t}, {t}) -> {t}")
        else:
            lines.append(f'  %v{i} = "aten.{ops[i % 4]}"({names[-1]}) : ({t}) -> {t}')
        names.append(f"%v{i}")
    lines.append(f"  return {names[-1]} : {t}\n}}\n")
    return "\n".join(lines)


def measure(argv, timeout):
    try:
        p = subprocess.run([sys.executable, "-c", _MEASURE] + [str(a) for a in argv],
                           capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"rc": None, "seconds": timeout, "rss_mb": None, "stderr": "timed out"}
    return json.loads(p.stdout)


def cell(r):
    if r is None:
        return "not run"
    if r["rc"] is None:
        return f"over {r['seconds']:.0f} s"
    if r["rc"] != 0:
        return "failed: " + r["stderr"].strip().splitlines()[-1][:80]
    return f"{r['seconds']:.2f} s, {r['rss_mb']:.0f} MB"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ops", default="1000,10000,100000")
    ap.add_argument("--full-build-max", type=int, default=100000,
                    help="largest graph given the whole build (with the C++ compiler)")
    ap.add_argument("--timeout", type=float, default=3600)
    ap.add_argument("--markdown", metavar="FILE")
    a = ap.parse_args()
    rows = ["| ops | graph file | `dynoc opt` | `dynoc build --emit=cpp` | C++ | whole `dynoc build` |",
            "|---|---|---|---|---|---|"]
    with tempfile.TemporaryDirectory(prefix="dynoc-scale-") as tmp:
        tmp = pathlib.Path(tmp)
        for n in (int(x) for x in a.ops.split(",")):
            g = tmp / f"chain{n}.mlir"
            g.write_text(chain(n))
            opt = measure([DYNOC, "opt", g, "--pass=dynoc-infer-shapes", "-o", "/dev/null"], a.timeout)
            cpp = tmp / f"chain{n}.cpp"
            emit = measure([DYNOC, "build", g, "--emit=cpp", "-O2", "-o", cpp], a.timeout)
            full = None
            if n <= a.full_build_max:
                full = measure([DYNOC, "build", g, "-O2", "-o", tmp / f"chain{n}.so"], a.timeout)
            size = f"{cpp.stat().st_size / 1e6:.1f} MB" if cpp.exists() else "-"
            row = (f"| {n:,} | {g.stat().st_size / 1e6:.1f} MB | {cell(opt)} | {cell(emit)} | "
                   f"{size} | {cell(full)} |")
            print(row, file=sys.stderr)
            rows.append(row)
    table = "\n".join(rows)
    print(table)
    if a.markdown:
        pathlib.Path(a.markdown).write_text(table + "\n")


if __name__ == "__main__":
    main()
