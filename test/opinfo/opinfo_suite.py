"""The op-coverage suite: PyTorch's own OpInfo samples (shipped with the torch
wheel) run through dynoc.compile on the CPU and compared with eager.

  opinfo_suite.py [--ops a,b] [--dtypes f32,i64] [--samples N] [--jobs J]
                  [--results FILE.jsonl] [--table FILE.md] [--ci]

samples.py says which OpInfos run (the Core ATen ops and the nn.functional ops
users call); worker.py what a sample's outcome is (pass, eager, wrong, error,
none, skip; the driver adds crash and hang). Each of J worker processes takes
one (op, dtype) at a time; a worker that dies or stops answering for
--timeout seconds is restarted after the sample it was on, which is recorded as
a crash or hang.

--ci runs the fixed sample listed in ci_expected.txt and compares each outcome
with the one recorded there: exit 1 on any wrong result, crash, hang or error,
and on a sample recorded as passing that no longer does. Without --ci, exit 1
on any wrong result, crash or hang.
"""
import argparse
import collections
import json
import os
import pathlib
import queue
import subprocess
import sys
import threading
import time

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE))
import samples as _samples  # noqa: E402

FAILING = ("wrong", "crash", "hang")
CI_EXPECTED = HERE / "ci_expected.txt"


def _say(msg):
    sys.stderr.write(msg + "\n")
    sys.stderr.flush()


class Slot:
    """One worker process and the thread that feeds it tasks."""

    def __init__(self, tasks, results, timeout, env):
        self.tasks, self.results, self.timeout, self.env = tasks, results, timeout, env
        self.proc = None

    def _start(self):
        self.proc = subprocess.Popen(
            [sys.executable, str(HERE / "worker.py")], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=self.env,
            cwd=str(HERE))
        lines = queue.Queue()

        def read(stream):
            for ln in stream:
                lines.put(ln)
            lines.put(None)

        threading.Thread(target=read, args=(self.proc.stdout,), daemon=True).start()
        self.lines = lines

    def _stop(self):
        if self.proc:
            self.proc.kill()
            self.proc.wait()
            self.proc = None

    def run(self):
        while True:
            try:
                task = self.tasks.get_nowait()
            except queue.Empty:
                break
            self._run_task(task)
        if self.proc:
            self.proc.stdin.close()
            self.proc.wait()

    def _run_task(self, task):
        while task is not None:
            if self.proc is None:
                self._start()
            self.proc.stdin.write(json.dumps(task) + "\n")
            self.proc.stdin.flush()
            current = None
            while True:
                try:
                    ln = self.lines.get(timeout=self.timeout)
                except queue.Empty:
                    ln, lost = None, "hang"
                else:
                    lost = "crash"
                if ln is None:  # the worker died or stopped answering
                    code = self.proc.poll()
                    self._stop()
                    if current is None:
                        current = {"op": task["op"], "dtype": task["dtype"], "sample": -1}
                    why = (f"no answer in {self.timeout} s" if lost == "hang"
                           else f"worker exited {code}")
                    self.results.put(dict(current, outcome=lost, detail=why))
                    # go on after the sample it was on
                    task = (None if current["sample"] < 0
                            else dict(task, **{"from": current["sample"] + 1}))
                    break
                msg = json.loads(ln)
                if "start" in msg:
                    current = msg["start"]
                elif "done" in msg:
                    task = None
                    break
                else:
                    self.results.put(msg)


def run(tasks, jobs, timeout, env):
    """Runs the tasks on `jobs` workers; yields each result as it comes."""
    todo = queue.Queue()
    for t in tasks:
        todo.put(t)
    results = queue.Queue()
    slots = [Slot(todo, results, timeout, env) for _ in range(jobs)]
    threads = [threading.Thread(target=s.run, daemon=True) for s in slots]
    for t in threads:
        t.start()
    while any(t.is_alive() for t in threads) or not results.empty():
        try:
            yield results.get(timeout=0.5)
        except queue.Empty:
            pass


def _ci_expected():
    """{(op, dtype, sample): outcome} of the CI sample."""
    expected = {}
    for ln in CI_EXPECTED.read_text().splitlines():
        ln = ln.split("#", 1)[0].strip()
        if ln:
            op, dtype, sample, outcome = ln.split()
            expected[(op, dtype, int(sample))] = outcome
    return expected


def _table(rows, chosen, path, device="CPU"):
    """docs/op-coverage.md: the summary, the pass rate per dtype, op x dtype, and
    the commonest reasons a sample did not pass."""
    by = collections.defaultdict(list)
    for r in rows:
        by[(r["op"], r["dtype"])].append(r)
    counted = [r for r in rows if r["outcome"] not in ("skip", "none")]
    outcomes = collections.Counter(r["outcome"] for r in rows)

    def rate(rs):
        rs = [r for r in rs if r["outcome"] not in ("skip", "none")]
        return (sum(r["outcome"] == "pass" for r in rs), len(rs))

    lines = [f"# Op coverage: PyTorch's OpInfo samples through dynoc on the {device}", "",
             "Written by test/opinfo/opinfo_suite.py (`tools/test.sh --opinfo` writes "
             "the CPU table) from the OpInfo database of the installed torch "
             f"({_torch_version()}); each sample is called through `dynoc.compile`, "
             "its built code run (checked by `dynoc.counters['compiled_calls']`) and "
             "compared with eager at `torch.testing.assert_close`'s default tolerance "
             "for the dtype. A sample passes when one graph with no break was built, "
             "ran, and matched. Outcomes: pass; eager (dynoc ran it eagerly, with "
             "the reason it gave); wrong; error (dynoc raised, eager did not); "
             "crash/hang (the worker died or stopped); none (no graph to build); skip "
             "(eager raises on the sample, or the op is random).", ""]
    for group in ("core", "functional"):
        rs = [r for r in counted if chosen[r["op"]][1] == group]
        p, n = rate(rs)
        ops = {r["op"] for r in rs}
        full = sum(1 for op in ops if rate([r for r in rs if r["op"] == op]) ==
                   (len([r for r in rs if r["op"] == op]),) * 2)
        label = "Core ATen OpInfos" if group == "core" else "nn.functional and composites"
        lines.append(f"- **{label}**: {p} of {n} samples pass "
                     f"({100.0 * p / max(n, 1):.1f}%); {full} of {len(ops)} ops pass "
                     "every sample.")
    lines.append("- Outcomes over all samples: " + ", ".join(
        f"{k} {v}" for k, v in sorted(outcomes.items(), key=lambda kv: -kv[1])) + ".")
    lines += ["", "## By dtype", "", "| dtype | pass | of | % |", "|---|---|---|---|"]
    for d in _samples.DTYPE_NAMES.values():
        p, n = rate([r for r in rows if r["dtype"] == d])
        if n:
            lines.append(f"| {d} | {p} | {n} | {100.0 * p / n:.1f} |")
    lines += ["", "## Why samples do not pass (the 40 commonest reasons)", "",
              "| outcome | reason | samples |", "|---|---|---|"]
    reasons = collections.Counter(
        (r["outcome"], _short(r.get("detail", ""))) for r in rows
        if r["outcome"] not in ("pass", "skip", "none"))
    for (outcome, why), n in reasons.most_common(40):
        lines.append(f"| {outcome} | {why} | {n} |")
    names = list(_samples.DTYPE_NAMES.values())
    lines += ["", "## Op by dtype", "",
              "Each cell: samples passing / samples run (a letter for what the others "
              "did: e eager, w wrong, x error, c crash, h hang); blank: eager does not "
              "support the dtype; `-`: only skipped samples.", "",
              "| op | set | " + " | ".join(names) + " |",
              "|---|---|" + "---|" * len(names)]
    for op in sorted({r["op"] for r in rows}):
        cells = []
        for d in names:
            rs = by.get((op, d))
            if not rs:
                cells.append("")
                continue
            p, n = rate(rs)
            if not n:
                cells.append("-")
                continue
            marks = "".join(sorted({{"eager": "e", "wrong": "w", "error": "x", "crash": "c",
                                     "hang": "h"}[r["outcome"]] for r in rs
                                    if r["outcome"] in ("eager", "wrong", "error",
                                                        "crash", "hang")}))
            cells.append(f"{p}/{n}{' ' + marks if marks else ''}")
        lines.append(f"| `{op}` | {chosen[op][1]} | " + " | ".join(cells) + " |")
    pathlib.Path(path).write_text("\n".join(lines) + "\n")


def _short(detail):
    """A failure's reason with its sample-specific numbers cut, for grouping."""
    import re
    d = re.sub(r"graph_\d+", "graph_N", detail)
    d = re.sub(r"%[\w.]+", "%v", d)
    d = re.sub(r"\d+(\.\d+)?(e[-+]?\d+)?", "N", d)
    d = re.sub(r"'[^']*\.(py|so|mlir)'", "'FILE'", d)
    return d.replace("|", "\\|")[:160]


def _torch_version():
    import importlib.metadata
    return "torch " + importlib.metadata.version("torch")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ops", help="comma-separated OpInfo names (default: the suite's)")
    ap.add_argument("--dtypes", help="comma-separated: " + ",".join(_samples.BY_NAME))
    ap.add_argument("--samples", type=int, default=3, help="samples per op and dtype")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--timeout", type=int, default=300, help="seconds a sample may take")
    ap.add_argument("--results", help="write every sample's outcome here (JSON lines)")
    ap.add_argument("--table", help="write the coverage table (markdown) here")
    ap.add_argument("--ci", action="store_true", help="the fixed CI sample (ci_expected.txt)")
    ap.add_argument("--device", default="cpu",
                    help="cpu, or cuda (on the GPU machine: dynoc builds with --target=cuda)")
    a = ap.parse_args()

    chosen = _samples.selected()
    expected = _ci_expected() if a.ci else None
    if a.ops:
        unknown = [o for o in a.ops.split(",") if o not in chosen]
        if unknown:
            ap.error(f"not an OpInfo of the suite: {', '.join(unknown)}")
    dtype_filter = set(a.dtypes.split(",")) if a.dtypes else None
    if dtype_filter and dtype_filter - set(_samples.BY_NAME):
        ap.error(f"unknown dtype(s) {', '.join(sorted(dtype_filter - set(_samples.BY_NAME)))}")

    tasks, rows = [], []
    if expected is not None:
        wanted = collections.defaultdict(list)
        for op, dtype, sample in expected:
            wanted[(op, dtype)].append(sample)
        tasks = [{"op": op, "dtype": d, "only": sorted(s)} for (op, d), s in wanted.items()]
        limit = max(s for _, _, s in expected) + 1
    else:
        limit = a.samples
        for op in (a.ops.split(",") if a.ops else sorted(chosen)):
            info, _ = chosen[op]
            for d in _samples.dtypes(info, a.device):
                name = _samples.DTYPE_NAMES[d]
                if dtype_filter and name not in dtype_filter:
                    continue
                if _samples.is_random(info):
                    rows.append({"op": op, "dtype": name, "sample": -1, "outcome": "skip",
                                 "detail": "random op: needs a test of its statistics"})
                    continue
                tasks.append({"op": op, "dtype": name})

    env = dict(os.environ, DYNOC_OPINFO_SAMPLES=str(limit), PYTHONHASHSEED="0",
               OMP_NUM_THREADS="1", DYNOC_OPINFO_DEVICE=a.device)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(HERE), env.get("PYTHONPATH")]))
    _say(f"opinfo: {len(tasks)} (op, dtype) pairs, up to {limit} samples each, "
         f"{a.jobs} workers")
    t0 = time.time()
    out = open(a.results, "w") if a.results else None
    done_pairs = set()
    for r in run(tasks, a.jobs, a.timeout, env):
        rows.append(r)
        if out:
            out.write(json.dumps(r) + "\n")
            out.flush()
        if r["outcome"] in FAILING + ("error",):
            _say(f"  {r['outcome']}: {r['op']} {r['dtype']} sample {r['sample']}: "
                 f"{r.get('detail', '')[:200]}")
        done_pairs.add((r["op"], r["dtype"]))
        if len(done_pairs) % 50 == 0 and r["sample"] == 0:
            _say(f"  [{time.time() - t0:.0f} s] {len(done_pairs)} of {len(tasks)} pairs")
    if out:
        out.close()

    counted = [r for r in rows if r["outcome"] not in ("skip", "none")]
    passed = sum(r["outcome"] == "pass" for r in counted)
    tally = collections.Counter(r["outcome"] for r in rows)
    _say(f"opinfo: {passed} of {len(counted)} samples pass with built code "
         f"({100.0 * passed / max(len(counted), 1):.1f}%); " +
         ", ".join(f"{k} {v}" for k, v in sorted(tally.items())) +
         f"; {time.time() - t0:.0f} s")
    if a.table:
        _table(rows, chosen, a.table, "GPU (CUDA)" if a.device == "cuda" else "CPU")
        _say(f"opinfo: table written to {a.table}")

    bad = [r for r in rows if r["outcome"] in FAILING]
    if expected is not None:
        got = {(r["op"], r["dtype"], r["sample"]): r for r in rows}
        for k, want in sorted(expected.items()):
            r = got.get(k)
            have = r["outcome"] if r else "missing"
            if have == want:
                continue
            if want == "pass" or have in FAILING + ("error", "missing"):
                bad.append(r or {"op": k[0], "dtype": k[1], "sample": k[2],
                                 "outcome": "missing"})
                _say(f"  REGRESSION {k[0]} {k[1]} sample {k[2]}: {have} "
                     f"(ci_expected.txt: {want}) {r.get('detail', '') if r else ''}")
            else:
                _say(f"  changed {k[0]} {k[1]} sample {k[2]}: {have} "
                     f"(ci_expected.txt: {want}): update the file")
    if bad:
        _say(f"opinfo: FAILED: {len(bad)} sample(s)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
