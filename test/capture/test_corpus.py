"""The capture corpus: each program in programs/ runs under `dynoc capture` and
under PyTorch's Dynamo (dynamo_reference.py); the test checks what the program's
header expects and compares with Dynamo.

Header lines (docs/capture.md, "The capture corpus"):
  # expect graphs: N          forward graph count in manifest.json
  # expect backward: N        backward graph count (docs/training.md)
  # expect breaks: N          graph break count
  # expect recompiles: N
  # expect exit: N            exit code (default 0), equal to Dynamo's run's
  # expect break: TEXT        some break reason contains TEXT
  # expect guard: TEXT        some graph has exactly this guard text
  # expect ops: A B ...       every op appears in some graph
  # expect input: KIND NAME   some graph has this input (user/parameter/buffer/constant)
  # expect stderr: TEXT       dynoc capture's stderr contains TEXT
  # expect mutation: NAME     some graph writes back to this input
  # expect runs: N            some graph stands for N recorded graphs (a folded loop body)
  # expect unbuilt: NAME      this graph does not build (an op dynoc lacks, on purpose)
  # capture-args: ARGS        extra `dynoc capture` arguments (e.g. --entry MOD:FUNC)
  # env: NAME=VALUE           environment of the `dynoc capture` run (e.g. DYNOC_LOGS)
  # dynamo: same              graph and break counts equal Dynamo's (the default)
  # dynamo: breaks<=          dynoc breaks no more often than Dynamo (graphs not compared)
  # dynamo: graphs            graph counts equal (Dynamo does not count this kind of
                              break, e.g. a call to a disable()d function)
  # dynamo: stdout            stdout and exit code only (a whole-script region:
                              Dynamo makes no graphs of a script without torch.compile)
  # dynamo: skip              no comparison (the program uses a dynoc-only API)
  # stdout: plain             stdout is compared with the program's plain run, not
                              the reference's (which swaps every backend for its
                              counting one: a program whose own backend prints)
  # jit: random                in process (test_inprocess.py), stdout is not compared:
                              built code draws its own random numbers (dropout in
                              train mode), as Inductor's code does
stdout must equal the Dynamo run's stdout (which is eager's: its backend runs the
graphs eagerly).
"""
import glob
import json
import os
import re
import subprocess
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import reference_cache  # noqa: E402
from graph_check import check_graphs  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
DYNOC = os.path.join(ROOT, "bazel-bin", "tools", "dynoc", "dynoc")
PROGRAMS = sorted(glob.glob(os.path.join(HERE, "programs", "*.py")))


def opcodes_of(path):
    """The opcode names the running Python compiles `path` to, every nested
    function and class body included."""
    import dis
    names, todo = set(), [compile(open(path).read(), path, "exec")]
    while todo:
        code = todo.pop()
        names |= {i.opname for i in dis.get_instructions(code)}
        todo += [c for c in code.co_consts if hasattr(c, "co_code")]
    return names


def opcode_cover(programs):
    """A few programs that between them use every opcode the whole corpus
    compiles to on the running Python (greedy set cover, in corpus order on
    ties): the corpus subset that CI runs on 3.12 and 3.13, whose bytecode
    differs from 3.11's."""
    ops = {p: opcodes_of(p) for p in programs}
    left, chosen = set().union(*ops.values()), []
    while left:
        best = max(programs, key=lambda p: len(ops[p] & left))
        chosen.append(best)
        left -= ops[best]
    return sorted(chosen)


# DYNOC_CORPUS=opcodes: only the opcode cover (tools/test.sh's other Pythons).
if os.environ.get("DYNOC_CORPUS") == "opcodes":
    PROGRAMS = opcode_cover(PROGRAMS)


def header(path):
    exp = {"expect": {}, "break": [], "guard": [], "ops": [], "input": [], "stderr": [], "mutation": [], "runs": [], "unbuilt": [], "env": {},
           "dynamo": "same", "args": [], "jit": None, "stdout": "reference"}
    for line in open(path):
        m = re.match(r"#\s*expect (\w+):\s*(.*)$", line)
        if m:
            key, val = m.group(1), m.group(2).strip()
            if key in ("graphs", "backward", "breaks", "recompiles", "exit"):
                exp["expect"][key] = int(val)
            elif key == "ops":
                exp["ops"] += val.split()
            elif key in exp:
                exp[key].append(val)
            else:
                raise ValueError(f"{path}: unknown expectation '{key}'")
        m = re.match(r"#\s*env:\s*(\w+)=(.*)$", line)
        if m:
            exp["env"][m.group(1)] = m.group(2).strip()
        m = re.match(r"#\s*capture-args:\s*(.*)$", line)
        if m:
            exp["args"] += m.group(1).split()
        m = re.match(r"#\s*jit:\s*(\S+)", line)
        if m:
            exp["jit"] = m.group(1)
        m = re.match(r"#\s*stdout:\s*(\S+)", line)
        if m:
            exp["stdout"] = m.group(1)
        m = re.match(r"#\s*dynamo:\s*(\S+)", line)
        if m:
            exp["dynamo"] = m.group(1)
    return exp


def run(args, env=None):
    e = dict(os.environ, PYTHONHASHSEED="0", **(env or {}))
    return subprocess.run(args, capture_output=True, text=True, env=e, timeout=600)


def dynamo_reference(program, out_json):
    """The program's run under PyTorch's Dynamo (dynamo_reference.py), with
    Dynamo's counts written to `out_json`; stored across checkouts
    (test/reference_cache.py)."""
    runner = os.path.join(HERE, "dynamo_reference.py")
    return reference_cache.run("dynamo", [sys.executable, runner, str(out_json), program],
                               [program, runner], [out_json])


def check_builds(out, graphs, unbuilt=()):
    """Every graph builds with `dynoc build` and, run on the inputs the program
    gave it (DYNOC_SAVE_EXAMPLES), matches what eager PyTorch computed; the
    `unbuilt` ones fail to build."""
    for r in check_graphs(out, graphs):
        if r.name in unbuilt:
            assert not r.built, f"{r.name} built, but the program expects it not to"
            continue
        assert r.built, f"build of {r.name} failed:\n{r.error}"
        assert not r.compared or r.max_err <= 1e-4, f"{r.name}: max error {r.max_err}"


@pytest.mark.parametrize("program", PROGRAMS, ids=[os.path.basename(p)[:-3] for p in PROGRAMS])
def test_program(program, tmp_path):
    exp = header(program)
    out = tmp_path / "dynoc_out"
    dyn = run([DYNOC, "capture", "-o", str(out), *exp["args"], program],
              env={"DYNOC_SAVE_EXAMPLES": "1", **exp["env"]})
    want_exit = exp["expect"].get("exit", 0)
    assert dyn.returncode == want_exit, f"dynoc capture exited {dyn.returncode}:\n{dyn.stderr}"
    manifest = json.load(open(out / "manifest.json"))
    graphs, breaks = manifest["graphs"], manifest["breaks"]
    # Forward graphs are what Dynamo counts; backward graphs (the autograd
    # engine's ops, docs/training.md) are counted apart.
    backward = [g for g in graphs if g.get("kind") == "backward"]
    counts = {"graphs": len(graphs) - len(backward), "backward": len(backward),
              "breaks": len(breaks), "recompiles": len(manifest["recompiles"])}
    report = dyn.stderr[-3000:]
    for key, want in exp["expect"].items():
        if key != "exit":
            assert counts[key] == want, f"{key}: {counts[key]} != {want}\n{report}"
    reasons = [b["reason"] for b in breaks]
    for text in exp["break"]:
        assert any(text in r for r in reasons), f"no break reason contains {text!r}: {reasons}"
    for b in breaks:  # every break names the user's file:line
        assert re.search(r":\d+$", b["location"]), b
    runs = sorted(g["runs"] for g in graphs)
    for want in exp["runs"]:
        assert int(want) in runs, f"no graph runs {want} times: {runs}"
    guards = [t for g in graphs for t in g["guards"]]
    for text in exp["guard"]:
        assert text in guards, f"guard {text!r} not in {guards}"
    ops = {op for g in graphs for op in g["ops"]}
    for op in exp["ops"]:
        assert op in ops, f"op {op} not in {sorted(ops)}"
    inputs = {(i["kind"], i["name"]) for g in graphs for i in g["inputs"]}
    for text in exp["input"]:
        kind, name = text.split(None, 1)
        assert (kind, name) in inputs, f"input {kind} {name} not in {sorted(inputs)}"
    mutated = {m["input"] for g in graphs for m in g["mutations"]}
    for name in exp["mutation"]:
        assert name in mutated, f"no graph writes back {name}: {sorted(mutated)}"
    for text in exp["stderr"]:
        assert text in dyn.stderr, f"{text!r} not in stderr:\n{dyn.stderr}"
    for g in graphs:  # the .mlir of every graph is there and names its ops
        text = open(out / g["mlir"]).read()
        for op in g["ops"]:
            assert op.split(".")[1] in text

    check_builds(out, graphs, exp["unbuilt"])
    if exp["dynamo"] == "skip":
        return
    ref_json = tmp_path / "dynamo.json"
    ref = dynamo_reference(program, ref_json)
    dynamo = json.load(open(ref_json))
    if exp["stdout"] == "plain":
        plain = run([sys.executable, program])
        assert dyn.stdout == plain.stdout, "stdout differs from the plain run"
    else:
        assert dyn.stdout == ref.stdout, "stdout differs from the reference run"
    assert dynamo["exit"] == want_exit, ref.stderr[-3000:]
    compare_counts(exp["dynamo"], counts, dynamo, program)


def compare_counts(mode, counts, dynamo, program):
    """dynoc's graph/break counts against Dynamo's, as the `# dynamo:` mode says."""
    if mode == "same":
        assert (counts["graphs"], counts["breaks"]) == (dynamo["graphs"], dynamo["breaks"]), \
            f"dynoc {counts} vs Dynamo {dynamo}"
    elif mode == "graphs":
        assert counts["graphs"] == dynamo["graphs"], f"dynoc {counts} vs Dynamo {dynamo}"
    elif mode == "stdout":
        pass  # stdout is compared by the caller
    elif mode == "breaks<=":
        assert counts["breaks"] <= dynamo["breaks"], f"dynoc {counts} vs Dynamo {dynamo}"
    else:
        raise ValueError(f"{program}: unknown dynamo mode {mode!r}")
