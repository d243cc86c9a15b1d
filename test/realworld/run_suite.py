"""The real-program suite: models from transformers (installed from PyPI at test
time, never vendored) captured as their docs call them, against eager and
Dynamo, then built and run against eager.

  run_suite.py [--models a,b,...] [--ci] [--workdir DIR] [--table FILE] [--json FILE]
               [--merge ROWS.json ...]

For each model (models.py) it writes a standalone script and runs it three ways:
plain Python with TORCHDYNAMO_DISABLE=1 (eager: the reference stdout and exit
code), `dynoc capture` (DYNOC_SAVE_EXAMPLES=1) and under Dynamo with a counting
backend (test/capture/dynamo_reference.py: graphs and breaks). Then each
captured graph is built and run on the program's own inputs. A model passes
when dynoc's stdout and exit code equal eager's, its graph and break counts
equal Dynamo's (or models.KNOWN_DIFFERENCES states why not), every graph builds
and every output is within 1e-4 of eager. Progress goes to stderr; the table
(markdown) to --table; exit status 1 if any model fails.
"""
import argparse
import json
import importlib.metadata
import os
import pathlib
import subprocess
import sys
import tempfile
import time

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
import models  # noqa: E402
import reference_cache  # noqa: E402
from graph_check import DYNOC, check_graphs  # noqa: E402

TOLERANCE = 1e-4


def _run(args, env=None, timeout=900):
    e = dict(os.environ, PYTHONHASHSEED="0", **(env or {}))
    return subprocess.run([str(a) for a in args], capture_output=True, text=True, env=e,
                          timeout=timeout)


def run_model(name, workdir):
    d = workdir / name
    d.mkdir(parents=True, exist_ok=True)
    script = d / f"{name.replace('-', '_')}.py"
    script.write_text(models.script(name))
    row = {"model": name, "class": next(m[2] for m in models.MODELS if m[0] == name)}
    t0 = time.time()
    # The eager and Dynamo runs are references, stored across checkouts
    # (test/reference_cache.py); dynoc's capture always runs.
    # (the models come from transformers: its version is part of the key)
    tf = importlib.metadata.version("transformers")
    eager = reference_cache.run(f"eager|{tf}", [sys.executable, script], [script],
                                env={"TORCHDYNAMO_DISABLE": "1"})
    out = d / "dynoc_out"
    dyn = _run([DYNOC, "capture", "-o", out, script], env={"DYNOC_SAVE_EXAMPLES": "1"})
    ref_json = d / "dynamo.json"
    runner = ROOT / "test" / "capture" / "dynamo_reference.py"
    reference_cache.run(f"dynamo|{tf}", [sys.executable, runner, ref_json, script],
                        [script, runner],
                        [ref_json])
    row["capture_s"] = round(time.time() - t0, 1)
    row["stdout_equal"] = dyn.stdout == eager.stdout and eager.returncode == dyn.returncode
    row["exit"] = dyn.returncode
    if eager.returncode != 0:
        row["error"] = "eager run failed: " + eager.stderr.strip().splitlines()[-1]
    try:
        manifest = json.loads((out / "manifest.json").read_text())
    except (OSError, ValueError):
        row["error"] = "no manifest: " + (dyn.stderr.strip().splitlines() or ["?"])[-1]
        return row
    graphs = manifest["graphs"]
    row["graphs"], row["breaks"] = len(graphs), len(manifest["breaks"])
    row["break_reasons"] = sorted({b["reason"] for b in manifest["breaks"]})
    try:
        ref = json.loads(ref_json.read_text())
        row["dynamo_graphs"], row["dynamo_breaks"] = ref["graphs"], ref["breaks"]
    except (OSError, ValueError):
        row["dynamo_graphs"] = row["dynamo_breaks"] = None
    row["ops"] = sorted({op for g in graphs for op in g["ops"]})
    t0 = time.time()
    results = check_graphs(out, graphs)
    row["build_s"] = round(time.time() - t0, 1)
    row["built"] = sum(r.built for r in results)
    errs = [r.max_err for r in results if r.compared]
    row["max_err"] = max(errs) if errs else None
    row["compared"] = len(errs)
    failed = [r for r in results if not r.built]
    if failed:
        lines = [l for l in failed[0].error.splitlines() if "error:" in l]
        row["build_error"] = (lines or failed[0].error.splitlines() or ["?"])[0][-300:]
    return row


def verdict(row):
    """(passed, why not)."""
    if "error" in row:
        return False, row["error"]
    if not row["stdout_equal"]:
        return False, "stdout or exit code differs from eager"
    if row["built"] != row["graphs"]:
        return False, "build failed: " + row.get("build_error", "")
    if row["max_err"] is not None and row["max_err"] > TOLERANCE:
        return False, f"max error {row['max_err']:.2e} > {TOLERANCE}"
    same = (row["graphs"], row["breaks"]) == (row["dynamo_graphs"], row["dynamo_breaks"])
    if not same and row["model"] not in models.KNOWN_DIFFERENCES:
        return False, (f"graphs/breaks {row['graphs']}/{row['breaks']} vs Dynamo "
                       f"{row['dynamo_graphs']}/{row['dynamo_breaks']}")
    return True, "" if same else models.KNOWN_DIFFERENCES[row["model"]]


def table(rows, machine):
    lines = [
        "| model | transformers class | stdout = eager | graphs / breaks (Dynamo) | built | "
        "max error | capture + reference s | build s | result |",
        "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        ok, why = verdict(r)
        err = "-" if r.get("max_err") is None else f"{r['max_err']:.1e}"
        lines.append(
            f"| {r['model']} | {r['class']} | {'yes' if r.get('stdout_equal') else 'NO'} | "
            f"{r.get('graphs', '?')} / {r.get('breaks', '?')} "
            f"({r.get('dynamo_graphs', '?')} / {r.get('dynamo_breaks', '?')}) | "
            f"{r.get('built', 0)}/{r.get('graphs', '?')} | {err} | {r.get('capture_s', '-')} | "
            f"{r.get('build_s', '-')} | {'pass' if ok else 'FAIL'}{': ' + why if why else ''} |")
    passed = sum(verdict(r)[0] for r in rows)
    return (_HEADER + f"{passed} of {len(rows)} models pass ({machine}).\n\n" +
            "\n".join(lines) + "\n" + _FOOTER)


_HEADER = """# Real models under capture

Written by `tools/test.sh --realworld` (`test/realworld/run_suite.py --table
docs/capture-models.md`). Each model is an architecture from transformers
(installed from PyPI at test time; a small config of the real architecture, random
weights, nothing downloaded), called as its documentation calls it (token ids with
an attention mask; decoder input ids for encoder-decoders; labels where the task head
takes them; pixel values; raw audio or log-mel features for speech; decoders keep
their default `use_cache=True`, so `past_key_values` come back), wrapped in
`torch.compile`. Columns: dynoc capture's stdout and exit code against eager
(`TORCHDYNAMO_DISABLE=1`); graphs / breaks against Dynamo's (torch 2.13, a counting
backend); how many graphs `dynoc build` compiled; the largest error of the built
graphs' outputs against eager on the program's own inputs (relative above 1,
absolute below); seconds for the three runs and for the builds.

"""

_FOOTER = """
Models that fail, by cause (each a gap of dynoc's, none a wrong result: a build
that cannot be made is a located error):

- **An in-place update of a view made by an op other than slice or select**
  (Funnel's `positional_attn *= cls_mask` on a gathered view) is a graph break: the
  recorder scatters updates of slices and selects back into their base (T5's
  `_shift_right`), where Dynamo's functionalization rewrites every view.
- **Ops the CPU backend has no kernel for yet**: `aten.im2col` (ConvBERT's span
  convolution, `nn.Unfold`), `aten.topk` (Mixtral's expert routing),
  `aten.as_strided` (Swin's window partition), `aten.repeat` (Whisper's decoder).

torchvision and timm are not in the suite: torchvision 0.28 (the release for torch
2.13) is published only as a CUDA-linked wheel whose compiled ops do not load
against the CPU build of torch, and `import torchvision` then fails in its
meta-kernel registrations (`operator torchvision::nms does not exist`); timm
imports torchvision unconditionally (`timm.layers.create_norm`). The same
architectures come from transformers instead: ResNet (bottleneck), RegNet (grouped
3x3 convolutions, as ResNeXt), ConvNeXt (depthwise convolutions), ViT.
"""


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models", help="comma-separated names (default: all)")
    p.add_argument("--ci", action="store_true", help="only the fast subset CI runs")
    p.add_argument("--workdir", help="where scripts and captures go (default: a temp dir)")
    p.add_argument("--table", help="write the markdown table here")
    p.add_argument("--json", help="write the rows here")
    p.add_argument("--merge", action="append", default=[],
                   help="rows of an earlier --json run to add to the table (models run now "
                        "replace theirs); repeatable")
    a = p.parse_args()
    names = [m[0] for m in models.MODELS]
    if a.ci:
        names = models.CI_SUBSET
    if a.models is not None:
        names = [n for n in a.models.split(",") if n]  # "": only --merge's rows
        unknown = [n for n in names if n not in {m[0] for m in models.MODELS}]
        if unknown:
            p.error(f"unknown model(s): {', '.join(unknown)}")
    workdir = pathlib.Path(a.workdir or tempfile.mkdtemp(prefix="dynoc-realworld-"))
    rows = []
    for i, name in enumerate(names):
        sys.stderr.write(f"[realworld] {i + 1}/{len(names)} {name} ... ")
        sys.stderr.flush()
        row = run_model(name, workdir)
        rows.append(row)
        ok, why = verdict(row)
        sys.stderr.write(f"{'pass' if ok else 'FAIL'} {why}\n")
    ran = {r["model"] for r in rows}
    for path in a.merge:
        rows += [r for r in json.loads(pathlib.Path(path).read_text()) if r["model"] not in ran]
    order = {m[0]: i for i, m in enumerate(models.MODELS)}
    rows.sort(key=lambda r: order.get(r["model"], len(order)))
    import platform
    machine = f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"
    text = table(rows, machine)
    sys.stdout.write(text)
    if a.table:
        pathlib.Path(a.table).write_text(text)
    if a.json:
        pathlib.Path(a.json).write_text(json.dumps(rows, indent=1))
    return 0 if all(verdict(r)[0] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
