"""CPython's own test suite as the oracle of dynoc's evaluator.

Each module of the interpreter's `test` package (not copied here: the one of
the Python that runs this) runs in a subprocess (worker.py): every test method
once plainly, then once with its body as a capture region. A test whose two
outcomes differ (pass/fail/error/skip, and for a failure the exception's type
and message) is a difference; each must be listed with its reason in
differences.txt, and a listed one that no longer differs is reported as well.

    python test/cpython/cpython_suite.py               every module below
    python test/cpython/cpython_suite.py --ci          the fast subset CI runs
    python test/cpython/cpython_suite.py test_scope …  these modules
    --table docs/capture-cpython.md                    writes the table
"""
import argparse
import concurrent.futures
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

# The modules that exercise the language (the list, then more).
MODULES = [
    "test_grammar", "test_scope", "test_exceptions", "test_generators", "test_with",
    "test_contextlib", "test_class", "test_funcattrs", "test_keywordonlyarg", "test_unpack",
    "test_unpack_ex", "test_listcomps", "test_setcomps", "test_dictcomps", "test_patma",
    "test_augassign", "test_bool", "test_int", "test_float", "test_string", "test_fstring",
    "test_dataclasses", "test_enum", "test_descr", "test_super", "test_iter",
    "test_itertools", "test_functools", "test_sort", "test_dict", "test_list", "test_set",
    "test_tuple",
    # more of the language, its object model and the frame/traceback machinery
    "test_opcodes", "test_raise", "test_compare", "test_richcmp", "test_decorators",
    "test_global", "test_positional_only_arg", "test_extcall", "test_named_expressions",
    "test_exception_group", "test_except_star", "test_slice", "test_range", "test_property",
    "test_abc", "test_collections", "test_operator", "test_contains", "test_genexps",
    "test_userdict", "test_userlist", "test_string_literals", "test_types", "test_typing",
    "test_copy", "test_math", "test_deque", "test_syntax", "test_metaclass", "test_weakref",
    "test_dis", "test_yield_from", "test_coroutines", "test_keyword", "test_defaultdict",
    "test_ordered_dict", "test_heapq", "test_bisect", "test_inspect", "test_traceback",
    "test_frame", "test_call", "test_dynamic", "test_print", "test_builtin", "test_format",
    "test_sys_settrace", "test_int_literal", "test_baseexception",
    "test_exception_variations", "test_pep646_syntax", "test_type_annotations",
    "test_typechecks", "test_unary", "test_binop", "test_pow", "test_index",
    "test_utf8source", "test_subclassinit", "test_context", "test_contextlib_async",
    "test_asyncgen",
]
# Fast and covering each opcode family, the doctest-based modules and the
# listed differences: CI runs these (about a minute on two cores).
CI_MODULES = [
    "test_grammar", "test_scope", "test_exceptions", "test_generators", "test_with",
    "test_class", "test_funcattrs", "test_keywordonlyarg", "test_unpack_ex", "test_listcomps",
    "test_genexps", "test_extcall", "test_dictcomps", "test_patma", "test_augassign",
    "test_raise", "test_decorators", "test_positional_only_arg", "test_named_expressions",
    "test_super", "test_contextlib", "test_except_star", "test_call", "test_dynamic",
    "test_traceback", "test_sys_settrace", "test_descr",
]


def read_known(path):
    """differences.txt: `test id<TAB or spaces>reason` per line."""
    known = {}
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith("#"):
                tid, _, reason = line.partition(" ")
                known[tid] = reason.strip()
    return known


def run_module(module, timeout):
    start = time.time()
    env = dict(os.environ, PYTHONHASHSEED="0")
    try:
        p = subprocess.run([sys.executable, os.path.join(HERE, "worker.py"), module],
                           capture_output=True, text=True, timeout=timeout, env=env,
                           cwd=ROOT)
        rc, out, err = p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired as e:
        rc, out, err = "timeout", e.stdout or "", e.stderr or ""
        out = out.decode() if isinstance(out, bytes) else out
        err = err.decode() if isinstance(err, bytes) else err
    rows = []
    for line in out.splitlines():
        if line.startswith("{"):
            rows.append(json.loads(line))
    return module, rc, rows, err, time.time() - start


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("modules", nargs="*")
    ap.add_argument("--ci", action="store_true", help="the fast subset CI runs")
    ap.add_argument("--table", help="write the Markdown table to this file")
    ap.add_argument("-j", "--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=int, default=900, help="seconds per module")
    ap.add_argument("--known", default=os.path.join(HERE, "differences.txt"))
    args = ap.parse_args()
    modules = args.modules or (CI_MODULES if args.ci else MODULES)
    known = read_known(args.known)
    results = {}
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for module, rc, rows, err, secs in pool.map(lambda m: run_module(m, args.timeout),
                                                     modules):
            results[module] = (rc, rows, err, secs)
            n = len(rows)
            diffs = [r for r in rows if r["captured"] is not None and
                     r["plain"] != r["captured"]]
            print(f"[cpython] {module}: {n} tests, {len(diffs)} differ, rc {rc}, "
                  f"{secs:.1f} s", file=sys.stderr, flush=True)
    problems = []
    table = []
    for module in modules:
        rc, rows, err, secs = results[module]
        if rc != 0:
            tail = err.strip().splitlines()[-1:] if err.strip() else ["(no output)"]
            problems.append(f"{module}: the worker ended with {rc}: {tail[0]}")
        evaluated = [r for r in rows if r["captured"] is not None]
        ran = [r for r in evaluated if r["plain"][0] != "skip"]
        equal = [r for r in ran if r["plain"] == r["captured"]]
        differ = [r for r in ran if r["plain"] != r["captured"]] + \
            [r for r in evaluated if r["plain"][0] == "skip" and r["plain"] != r["captured"]]
        declined = [r for r in ran if r["declined"]]
        for r in differ:
            if r["id"] not in known:
                problems.append(f"{r['id']}: plain {r['plain']}, under capture "
                                f"{r['captured']} (not in differences.txt)")
        table.append((module, len(rows), len(ran), len(equal), differ, len(declined), secs,
                      rc))
    seen = {r["id"] for m in modules for r in results[m][1]}
    still = {r["id"] for m in modules for r in results[m][1]
             if r["captured"] is not None and r["plain"] != r["captured"]}
    for tid in known:
        if tid in seen and tid not in still:
            problems.append(f"{tid}: listed in differences.txt but now equal: remove it")
    total_ran = sum(t[2] for t in table)
    total_equal = sum(t[3] for t in table)
    print(f"[cpython] {len(modules)} modules: {total_equal}/{total_ran} tests that ran have "
          f"equal outcomes ({100.0 * total_equal / max(total_ran, 1):.2f}%)", file=sys.stderr)
    if args.table:
        write_table(args.table, table, known, total_ran, total_equal)
    for p in problems:
        print(f"[cpython] FAIL {p}", file=sys.stderr)
    return 1 if problems else 0


def write_table(path, table, known, total_ran, total_equal):
    import platform
    lines = [
        "# CPython's test suite under dynoc's evaluator",
        "",
        "Written by `tools/test.sh --cpython` (`test/cpython/cpython_suite.py --table`). "
        f"Python {platform.python_version()}, the interpreter's own `test` package.",
        "",
        "Each test method runs twice in one process: plainly, then with its body as a "
        "capture region (`record_only`, every frame of the `test` package it calls followed "
        "as user code is). *Ran*: tests not skipped plainly. *Equal*: same outcome "
        "(pass/fail/error/skip, and a failure's exception type and message). *Declined*: "
        "tests in which the evaluator declined a frame (an opcode it does not run) and CPython "
        "ran it, a clean break.",
        "",
        f"**{total_equal} of {total_ran} tests that ran are equal "
        f"({100.0 * total_equal / max(total_ran, 1):.2f}%).**",
        "",
        "| module | tests | ran | equal | differ | declined | seconds |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for module, n, ran, equal, differ, declined, secs, rc in table:
        note = "" if rc == 0 else f" (worker: {rc})"
        lines.append(f"| {module}{note} | {n} | {ran} | {equal} | {len(differ)} | {declined} "
                     f"| {secs:.1f} |")
    lines += ["", "## Differences and their reasons", ""]
    any_diff = False
    for module, n, ran, equal, differ, declined, secs, rc in table:
        for r in differ:
            any_diff = True
            lines.append(f"- `{r['id']}`: {known.get(r['id'], '(no reason listed)')}")
    if not any_diff:
        lines.append("None.")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    sys.exit(main())
