"""A process with live dynoc objects exits with its own status and flushes its
output (issue 49): a loaded model that 4 threads are still running (the
interpreter waits for them at exit, as for any non-daemon thread) and a model
built in process by dynoc.compile are alive when the program ends normally, by
sys.exit(3), by an uncaught exception, or by SIGTERM. Each run is bounded (a
hang at exit fails the test). (Daemon threads still inside torch's own ops when
the interpreter finalizes abort torch alone, with no dynoc: not tested here.)"""
import json
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from conftest import package_env

PROGRAM = """
import os, signal, sys, threading, torch, dynoc
model = dynoc.load(sys.argv[1])
compiled = dynoc.compile(lambda a: torch.relu(a) * 2)
for _ in range(2):
    compiled(torch.randn(4))
x, y = torch.randn(3, 16), torch.randn(3, 8)
def serve():
    for _ in range(300):
        model(x, y)
threads = [threading.Thread(target=serve) for _ in range(4)]
for t in threads:
    t.start()
print("SERVING", end="")  # no newline, no flush: exit must flush it
how = sys.argv[2]
if how == "exit3":
    sys.exit(3)
if how == "raise":
    raise ValueError("the program's own error")
if how == "sigterm":
    sys.stdout.flush()
    os.kill(os.getpid(), signal.SIGTERM)
"""


@pytest.mark.parametrize("how,status", [("normal", 0), ("exit3", 3), ("raise", 1),
                                        ("sigterm", -signal.SIGTERM)])
def test_a_process_with_live_models_exits_with_its_own_status(dyn_mlp, tmp_path, how,
                                                               status):
    prog = tmp_path / "prog.py"
    prog.write_text(PROGRAM)
    env = package_env(DYNOC_CACHE_DIR=str(tmp_path / "cache"))
    p = subprocess.run([sys.executable, str(prog), str(dyn_mlp), how], capture_output=True,
                       text=True, env=env, timeout=120)
    assert p.returncode == status, p.stderr[-3000:]
    assert p.stdout == "SERVING", (p.stdout, p.stderr[-2000:])
    assert "terminate called" not in p.stderr and "Segmentation" not in p.stderr
    if how == "raise":
        assert p.stderr.rstrip().endswith("ValueError: the program's own error")


# A whole-process profile (DYNOC_PROFILE), a compiled module run from a thread
# pool, and a gloo process group never destroyed with a
# TorchDistributedCommunicator alive (the shape of the abort issue 49 found).
PROGRAM_WITH_GROUP = textwrap.dedent("""
    import os, signal, sys, tempfile
    from concurrent.futures import ThreadPoolExecutor
    import torch, torch.distributed as dist
    import dynoc

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.GELU(), torch.nn.Linear(32, 4))
    compiled = dynoc.compile(model)
    x = torch.randn(8, 16)
    with torch.no_grad():
        for _ in range(3):
            compiled(x)
        with ThreadPoolExecutor(4) as pool:
            outs = list(pool.map(lambda _: compiled(x), range(16)))
    assert all(torch.allclose(o, outs[0]) for o in outs)

    dist.init_process_group("gloo", rank=0, world_size=1,
                            init_method="file://" + tempfile.mktemp())
    t = torch.ones(4)
    dist.all_reduce(t)
    communicator = dynoc.TorchDistributedCommunicator()

    mode = sys.argv[1]
    print("last line", dynoc.counters["compiled_calls"] >= 2, flush=False)
    if mode == "exit":
        sys.exit(3)
    if mode == "raise":
        raise RuntimeError("the program's own error")
    if mode == "sigterm":
        sys.stdout.flush()
        os.kill(os.getpid(), signal.SIGTERM)
        signal.pause()
""")

MODES = {"normal": 0, "exit": 3, "raise": 1, "sigterm": -signal.SIGTERM}


@pytest.mark.parametrize("mode", list(MODES))
def test_a_process_with_a_profile_and_a_process_group_exits_with_its_own_status(mode,
                                                                               tmp_path):
    script = tmp_path / "program.py"
    script.write_text(PROGRAM_WITH_GROUP)
    env = package_env()
    env.update(DYNOC_CACHE_DIR=str(tmp_path / "cache"), DYNOC_PROFILE=str(tmp_path / "p.json"))
    start = time.monotonic()
    p = subprocess.run([sys.executable, str(script), mode], capture_output=True, text=True,
                       env=env, timeout=300)
    assert p.returncode == MODES[mode], p.stderr[-3000:]
    assert p.stdout.splitlines()[-1] == "last line True", p.stdout
    assert "terminate called" not in p.stderr and "Segmentation" not in p.stderr, p.stderr
    if mode == "raise":
        assert p.stderr.rstrip().endswith("RuntimeError: the program's own error"), p.stderr
    if mode != "sigterm":  # SIGTERM's default action runs no exit handlers
        trace = json.loads((tmp_path / "p.json").read_text())
        assert trace["traceEvents"], "the profile holds no span"
    assert time.monotonic() - start < 240
