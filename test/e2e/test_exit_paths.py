"""A process with live dynoc objects exits with its own status and flushes its
output (issue 49): a loaded model that 4 threads are still running (the
interpreter waits for them at exit, as for any non-daemon thread) and a model
built in process by dynoc.compile are alive when the program ends normally, by
sys.exit(3), by an uncaught exception, or by SIGTERM. Each run is bounded (a
hang at exit fails the test). (Daemon threads still inside torch's own ops when
the interpreter finalizes abort torch alone, with no dynoc: not tested here.)"""
import signal
import subprocess
import sys

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
