"""Feeds mutants of the repository's graph files to `dynoc opt` and `dynoc
build` and counts what happens: a clean error (one located message, exit 1),
success, a crash (a signal, `terminate`, an internal error) or a hang.

  tools/mutate_graphs.py [--count N] [--seed S] [--timeout SECONDS]
                         [--keep DIR] [--markdown FILE]

The mutants come from test/ir/*.mlir and test/models/*.mlir, by the classes
issue #20's experiment used: lines deleted and swapped, digits changed,
attributes changed (a value replaced by 0, -1, a huge number or a string),
random bytes written over the text, brackets nested thousands deep, and a
graph grown to thousands of ops. Each runs `dynoc opt FILE
--pass=dynoc-infer-shapes` and `dynoc build FILE --emit=cpp -O2` (the whole
build pipeline up to the C++ compiler) with a time limit. Exit status 1 if
any run crashed or hung; --keep DIR saves those inputs.
"""
import argparse
import collections
import concurrent.futures as futures
import pathlib
import random
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
DYNOC = ROOT / "bazel-bin" / "tools" / "dynoc" / "dynoc"

_DIGITS = re.compile(rb"\d+")
_ATTR_VALUE = re.compile(rb"(\w+ = )(-?\d+|\"[^\"]*\"|true|false|\[[^\]]*\])")
_REPLACEMENTS = [b"0", b"-1", b"9223372036854775807", b"-9223372036854775808",
                 b"4294967296", b'"x"', b"[]", b"[0, 0]", b"true", b"1.5"]


def _lines(text, rng):
    lines = text.split(b"\n")
    if len(lines) < 2:
        return text
    i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
    if rng.random() < 0.5:
        del lines[i]
    else:
        lines[i], lines[j] = lines[j], lines[i]
    return b"\n".join(lines)


def _digits(text, rng):
    spans = list(_DIGITS.finditer(text))
    if not spans:
        return text
    m = rng.choice(spans)
    new = rng.choice([b"0", b"1", b"7", b"65536", b"4294967297", str(rng.randrange(1 << 62)).encode()])
    return text[:m.start()] + new + text[m.end():]


def _attribute(text, rng):
    spans = list(_ATTR_VALUE.finditer(text))
    if not spans:
        return _digits(text, rng)
    m = rng.choice(spans)
    return text[:m.start(2)] + rng.choice(_REPLACEMENTS) + text[m.end(2):]


def _bytes(text, rng):
    b = bytearray(text)
    for _ in range(rng.randint(1, 8)):
        if b:
            b[rng.randrange(len(b))] = rng.randrange(256)
    return bytes(b)


def _nesting(text, rng):
    depth = rng.choice([300, 3000, 30000])
    kind = rng.choice([(b"[", b"]"), (b"{", b"}"), (b"(", b")"), (b"<", b">")])
    at = rng.randrange(len(text) + 1)
    return text[:at] + kind[0] * depth + kind[1] * rng.choice([0, depth]) + text[at:]


def _huge(_text, rng):
    n = rng.choice([2000, 20000])
    lines = ["func.func @g(%x: tensor<4x8xf32>) -> tensor<4x8xf32> attributes "
             '{dynoc.inputs = [{kind = "user", name = "x"}]} {']
    prev = "%x"
    for i in range(n):
        op = rng.choice(["relu", "neg", "exp"])
        lines.append(f'  %{i} = "aten.{op}"({prev}) : (tensor<4x8xf32>) -> tensor<4x8xf32>')
        prev = f"%{i}"
    lines.append(f"  return {prev} : tensor<4x8xf32>\n}}\n")
    return "\n".join(lines).encode()


MUTATIONS = {"lines": _lines, "digits": _digits, "attribute": _attribute,
             "bytes": _bytes, "nesting": _nesting, "huge": _huge}
WEIGHTS = {"lines": 6, "digits": 6, "attribute": 6, "bytes": 4, "nesting": 1, "huge": 0.1}


def classify(proc, timed_out):
    if timed_out:
        return "hang"
    err = proc.stderr
    if proc.returncode < 0 or proc.returncode >= 128:
        return "crash"
    if b"terminate called" in err or b"internal error" in err or b"Assertion" in err \
            or b"Sanitizer" in err or b"Stack dump" in err:
        return "crash"
    return "ok" if proc.returncode == 0 else "error"


def run_one(path, timeout, tmp):
    results = {}
    for name, argv in (("opt", [DYNOC, "opt", path, "--pass=dynoc-infer-shapes", "-o", "/dev/null"]),
                       ("build", [DYNOC, "build", path, "--emit=cpp", "-O2",
                                  "-o", str(tmp / (path.stem + ".cpp"))])):
        try:
            p = subprocess.run(argv, capture_output=True, timeout=timeout)
            results[name] = (classify(p, False), p.stderr[-400:])
        except subprocess.TimeoutExpired:
            results[name] = ("hang", b"")
    return results


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--count", type=int, default=1600, help="mutants (default 1600)")
    ap.add_argument("--seed", type=int, default=20)
    ap.add_argument("--timeout", type=float, default=60, help="seconds a run may take (default 60)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--keep", metavar="DIR", help="save crashing and hanging inputs here")
    ap.add_argument("--markdown", metavar="FILE", help="write the table here")
    a = ap.parse_args()
    if not DYNOC.exists():
        sys.exit(f"mutate_graphs: {DYNOC} is not built; run `bazel build //tools/dynoc` first")
    sources = sorted((ROOT / "test" / "ir").glob("*.mlir")) + sorted((ROOT / "test" / "models").glob("*.mlir"))
    texts = [s.read_bytes() for s in sources]
    rng = random.Random(a.seed)
    kinds = list(MUTATIONS)
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="dynoc-mutants-"))
    jobs = []
    for i in range(a.count):
        kind = rng.choices(kinds, weights=[WEIGHTS[k] for k in kinds])[0]
        src = rng.randrange(len(texts))
        mutant = MUTATIONS[kind](texts[src], rng)
        path = tmp / f"m{i:05d}-{kind}-{sources[src].stem}.mlir"
        path.write_bytes(mutant)
        jobs.append((path, kind))
    counts = collections.defaultdict(collections.Counter)
    bad = []
    done = 0
    with futures.ThreadPoolExecutor(a.jobs) as pool:
        futs = {pool.submit(run_one, p, a.timeout, tmp): (p, k) for p, k in jobs}
        for f in futures.as_completed(futs):
            path, kind = futs[f]
            for cmd, (outcome, err) in f.result().items():
                counts[(kind, cmd)][outcome] += 1
                if outcome in ("crash", "hang"):
                    bad.append((path, cmd, outcome, err))
            done += 1
            if done % 100 == 0:
                print(f"[mutate_graphs] {done}/{a.count} mutants", file=sys.stderr)
    rows = ["| mutation | command | mutants | clean error | success | crash | hang |",
            "|---|---|---|---|---|---|---|"]
    total = collections.Counter()
    for (kind, cmd) in sorted(counts):
        c = counts[(kind, cmd)]
        total.update(c)
        rows.append(f"| {kind} | {cmd} | {sum(c.values())} | {c['error']} | {c['ok']} | {c['crash']} | {c['hang']} |")
    rows.append(f"| all | both | {sum(total.values())} | {total['error']} | {total['ok']} | {total['crash']} | {total['hang']} |")
    table = "\n".join(rows)
    print(table)
    for path, cmd, outcome, err in bad:
        print(f"{outcome}: dynoc {cmd} {path.name}: {err.decode(errors='replace').strip()[-300:]}")
        if a.keep:
            pathlib.Path(a.keep).mkdir(parents=True, exist_ok=True)
            shutil.copy(path, pathlib.Path(a.keep) / path.name)
    if a.markdown:
        pathlib.Path(a.markdown).write_text(table + "\n")
    shutil.rmtree(tmp, ignore_errors=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
