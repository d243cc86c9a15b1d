"""The capture corpus in a plain process (docs/capture.md, "In the same
process"): each program that calls torch.compile, torch._dynamo.optimize or
dynoc.compile runs as `python3 PROGRAM` with DYNOC_TORCH_COMPILE=1, so its
regions are captured, built and run by dynoc in that process. Its stdout and
exit code must equal the Dynamo reference run's (eager's output; for a
`# dynamo: skip` program, the program's run with DYNOC_COMPILE=0), and its
graph and break counts Dynamo's (as the program's `# dynamo:` header says
they compare under `dynoc capture`).

CI runs the programs in SUBSET; DYNOC_JIT_CORPUS=all (tools/test.sh
--jit-corpus) runs every one. Builds go to the user's dynoc cache, so a
second run takes them from there.
"""
import json
import os
import re
import sys

import pytest

from test_corpus import PROGRAMS, compare_counts, dynamo_reference, header, run

# Programs with breaks, recompiles, mutations, buffers, dataclass results,
# global tensors and the seed APIs, and (COMPILED) programs that call a region
# again with guards passing: there the built code must have run.
COMPILED = {"p114_enum_and_special_float_globals": 3, "p76_size_guard": 2, "p83_dynamic_true": 2,
            "p84_mark_dynamic_view": 2, "p89_computed_size_one_run": 2,
            "p97_global_of_other_module": 1, "p103_compiled_module_is_module": 1,
            "p46_shape_recompile": 1, "p39_int_arg_recompile": 1,
            # resumed after each of its 3 breaks: calls 2-4 run the graph
            # before the first break built, calls 3-4 the next, call 4 the next
            "p132_breaks_resumed": 3 + 2 + 1}
SUBSET = {"p01_function", "p04_module", "p19_sequential", "p26_no_grad", "p29_input_mutation",
          "p30_buffers", "p51_graph_break", "p53_disable", "p57_is_compiling",
          "p23_dataclass_out", "p31_global_tensor", "p47_dtype_recompile", "p123_dynamo_export",
          "p124_tutorial_training", "p125_is_compiling_cached", "p126_mark_static_dynamic",
          "p133_set_stance", "p134_own_backend",
          *COMPILED}
_REGION_API = re.compile(r"torch\.compile|_dynamo\.optimize|dynoc\.compile|@torch\.compile")


def _selected():
    every = os.environ.get("DYNOC_JIT_CORPUS") == "all"
    out = []
    for p in PROGRAMS:
        name = os.path.splitext(os.path.basename(p))[0]
        text = open(p).read()
        if not _REGION_API.search(text) or "capture-args:" in text:
            continue  # whole-script and --entry programs are `dynoc capture`'s
        if every or name in SUBSET:
            out.append(p)
    return out


@pytest.mark.parametrize("program", _selected(), ids=lambda p: os.path.basename(p)[:-3])
def test_program_in_process(program, tmp_path):
    exp = header(program)
    stats = tmp_path / "stats.json"
    env = {"DYNOC_TORCH_COMPILE": "1", "DYNOC_STATS": str(stats), **exp["env"]}
    got = run([sys.executable, program], env=env)
    ref_json = tmp_path / "dynamo.json"
    if exp["dynamo"] == "skip":  # Dynamo cannot run it: the reference is eager's run
        ref = run([sys.executable, program], env={**env, "DYNOC_COMPILE": "0",
                                                  "DYNOC_STATS": str(tmp_path / "x.json")})
    else:
        ref = dynamo_reference(program, ref_json)
    assert got.returncode == ref.returncode, got.stderr[-3000:]
    if exp["stdout"] == "plain":  # its own backend prints: as in its plain run
        plain = run([sys.executable, program])
        assert got.stdout == plain.stdout, \
            f"stdout differs from the plain run\n{got.stderr[-2000:]}"
    elif exp["jit"] != "random":
        assert got.stdout == ref.stdout, \
            f"stdout differs from the reference run\n{got.stderr[-2000:]}"
    if exp["dynamo"] == "skip" or not stats.exists():
        return  # (a program that exits through os._exit writes no stats)
    counts = json.loads(stats.read_text())
    name = os.path.splitext(os.path.basename(program))[0]
    assert counts["compiled_calls"] >= COMPILED.get(name, 0), counts
    dynamo = json.load(open(ref_json))
    compare_counts(exp["dynamo"], counts, dynamo, program)
