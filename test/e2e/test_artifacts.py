"""Artifacts stay whole under faults (docs/reliability.md): a `dynoc build` or
`dynoc capture` killed with SIGKILL at a random moment never leaves a
half-written file under a final name; a weights sidecar changed after the
build is refused by name; two captures into one directory at once do not
interleave (the second is refused)."""
import json
import os
import random
import signal
import subprocess
import sys
import time

import pytest
import torch
from safetensors.torch import load_file, save_file

from conftest import DYNOC, ROOT, run

MLIR = os.path.join(ROOT, "test", "models", "dyn_mlp.mlir")
WEIGHTS = os.path.join(ROOT, "test", "models", "dyn_mlp.safetensors")


def _kill_after(argv, delay, cwd=None):
    """Starts argv in a session of its own, SIGKILLs the whole session (the
    compiler it runs included) after `delay` seconds unless it ended."""
    p = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        p.wait(timeout=delay)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()
    return p.returncode


def _graph_with_weights(tmp_path, name, scale):
    """dyn_mlp.mlir beside its own weights (the original times `scale`)."""
    d = tmp_path / name
    d.mkdir()
    (d / "g.mlir").write_text(open(MLIR).read())
    w = {k: v * scale for k, v in load_file(WEIGHTS).items()}
    save_file(w, str(d / os.path.basename(WEIGHTS)))
    return d / "g.mlir"


def _timed(argv, cwd=None):
    start = time.monotonic()
    run(*argv, cwd=cwd, check=True)
    return time.monotonic() - start


def test_a_killed_build_leaves_whole_artifacts_or_none(tmp_path):
    import dynoc
    a = _graph_with_weights(tmp_path, "a", 1.0)
    b = _graph_with_weights(tmp_path, "b", -2.0)
    out = tmp_path / "out"
    out.mkdir()
    so, sidecar = out / "m.so", out / "m.weights.safetensors"
    t = _timed([DYNOC, "build", a, "-o", so])
    x, y = torch.randn(3, 16), torch.randn(3, 8)
    expected = {}
    for name, g in (("a", a), ("b", b)):
        run(DYNOC, "build", g, "-o", tmp_path / f"{name}.so", check=True)
        expected[name] = dynoc.load(tmp_path / f"{name}.so")(x, y)
    rng = random.Random(20)
    outcomes = {"whole": 0, "refused": 0}
    for i in range(14):
        g = a if i % 2 else b
        _kill_after([DYNOC, "build", g, "-o", so], rng.uniform(0.05, 1.2 * t))
        # Under the final names: whole files, or a pair the runtime refuses
        # by name, never a crash or a half-written file.
        assert so.exists() and sidecar.exists()
        p = run(DYNOC, "inspect", so)
        assert p.returncode == 0, p.stderr
        json.loads(p.stdout)
        load_file(str(sidecar))
        try:
            got = dynoc.load(so)(x, y)
        except Exception as e:  # noqa: BLE001 - the message is the point
            assert "is not the one model" in str(e), str(e)
            outcomes["refused"] += 1
            continue
        assert any(torch.allclose(got, e) for e in expected.values())
        outcomes["whole"] += 1
    assert outcomes["whole"] > 0, outcomes


CAPTURED = '''
import torch
m = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4))
f = torch.compile(m)
for n in (2, 3, 5):
    print(f(torch.randn(n, 8)).shape)
'''


def _check_capture_dir(d):
    """Every file under a final name in a capture directory is whole."""
    names = [n for n in os.listdir(d) if ".tmp" not in n and not n.startswith(".")]
    for n in names:
        path = os.path.join(d, n)
        if n == "manifest.json":
            json.load(open(path))
        elif n.endswith(".safetensors"):
            load_file(path)
        elif n.endswith(".mlir"):
            p = run(DYNOC, "opt", path)
            assert p.returncode == 0, (n, p.stderr)
        elif n == "report.txt":
            assert "graph" in open(path).read()
    return names


def test_a_killed_capture_leaves_whole_files_or_none(tmp_path):
    script = tmp_path / "s.py"
    script.write_text(CAPTURED)
    out = tmp_path / "out"
    t = _timed([DYNOC, "capture", script, "-o", out])
    assert "manifest.json" in _check_capture_dir(out)
    rng = random.Random(7)
    for _ in range(3):
        # Mostly near the end, where the files are written.
        _kill_after([DYNOC, "capture", script, "-o", out], rng.uniform(0.6 * t, 1.1 * t))
        _check_capture_dir(out)
    # And the directory is still usable: a capture completes into it.
    p = run(DYNOC, "capture", script, "-o", out)
    assert p.returncode == 0, p.stderr
    assert "manifest.json" in _check_capture_dir(out)


SLOW = '''
import time, torch
f = torch.compile(lambda x: x * 2)
print(f(torch.ones(3)).sum().item())
time.sleep(float(__import__("sys").argv[1]))
'''


def test_a_second_capture_into_a_busy_directory_is_refused(tmp_path):
    script = tmp_path / "slow.py"
    script.write_text(SLOW)
    out = tmp_path / "out"
    first = subprocess.Popen([DYNOC, "capture", str(script), "-o", str(out), "--", "6"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lock = out / ".dynoc-capture.lock"
    for _ in range(100):
        if lock.exists() and lock.read_text().strip():
            break
        time.sleep(0.05)
    second = run(DYNOC, "capture", script, "-o", out, "--", "0")
    assert second.returncode == 1
    assert second.stderr.strip() == (
        f"dynoc capture: error: another capture (pid {first.pid}) is writing "
        f"'{out}' now; wait for it to finish or pass another -o")
    stdout, stderr = first.communicate(timeout=120)
    assert first.returncode == 0, stderr
    assert stdout.strip() == "6.0"
    # Once the first is done, the directory is free again.
    third = run(DYNOC, "capture", script, "-o", out, "--", "0")
    assert third.returncode == 0, third.stderr
    assert "manifest.json" in _check_capture_dir(out)
