"""The in-process build cache under faults (issue 49; docs/capture.md, "In
the same process"): an entry damaged on disk (a truncated model, a weights
file changed, a folder left without its model) is said once on stderr,
discarded and built again, and the call runs built code with the right
result; a build killed half way leaves a folder the next build removes."""
import os
import subprocess
import sys
import textwrap
import time

import pytest

from conftest import package_env

PROGRAM = textwrap.dedent("""
    import torch, dynoc
    # a constant tensor of the graph: it goes into the weights file
    table = torch.linspace(-1, 1, 64)
    f = dynoc.compile(lambda x: torch.relu(x) * table + 1)
    x = torch.randn(64)
    for _ in range(3):
        y = f(x)
    ok = torch.allclose(y, torch.relu(x) * table + 1, rtol=1e-6, atol=1e-6)
    print(ok, dynoc.counters["compiled_calls"], dynoc.counters["builds"],
          dynoc.counters["cache_hits"])
""")


def run(tmp_path, cache):
    script = tmp_path / "program.py"
    script.write_text(PROGRAM)
    env = package_env()
    env["DYNOC_CACHE_DIR"] = str(cache)
    return subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          env=env, timeout=600)


def entry_of(cache):
    (entry,) = [p for p in cache.iterdir() if not p.name.startswith(".")]
    return entry


@pytest.fixture
def cached(tmp_path):
    """A cache holding the program's one entry, and the program's first run."""
    cache = tmp_path / "cache"
    first = run(tmp_path, cache)
    assert first.returncode == 0, first.stderr[-2000:]
    assert first.stdout.split() == ["True", "2", "1", "0"]
    return cache


def damage_model(entry):
    os.truncate(entry / "model.so", 1000)


def damage_weights(entry):
    data = bytearray((entry / "model.weights.safetensors").read_bytes())
    data[-8:] = b"\x7f" * 8  # the last constant's bytes: its digest no longer agrees
    (entry / "model.weights.safetensors").write_bytes(bytes(data))


def empty_entry(entry):
    (entry / "model.so").unlink()


@pytest.mark.parametrize("damage", [damage_model, damage_weights, empty_entry],
                         ids=["truncated-model", "changed-weights", "no-model"])
def test_a_damaged_cache_entry_is_built_again(cached, tmp_path, damage):
    entry = entry_of(cached)
    damage(entry)
    again = run(tmp_path, cached)
    assert again.returncode == 0, again.stderr[-2000:]
    # right result, built code ran, one build
    assert again.stdout.split()[:3] == ["True", "2", "1"], again.stdout
    said = [ln for ln in again.stderr.splitlines() if "cache entry" in ln]
    assert len(said) == 1 and str(entry) in said[0] and "building it again" in said[0], \
        again.stderr[-2000:]
    # the entry is whole again: the next run loads it
    third = run(tmp_path, cached)
    assert third.stdout.split() == ["True", "2", "0", "1"], third.stderr[-2000:]
    assert "cache entry" not in third.stderr


def test_a_build_killed_half_way_leaves_nothing_behind(cached, tmp_path):
    abandoned = cached / ".building-killed"
    abandoned.mkdir()
    (abandoned / "graph.mlir").write_text("half a graph")
    old = time.time() - 2 * 3600
    os.utime(abandoned, (old, old))
    recent = cached / ".building-running"  # another process's build in progress
    recent.mkdir()
    entry_of(cached).rename(cached / "moved")  # so that the next run builds
    again = run(tmp_path, cached)
    assert again.returncode == 0, again.stderr[-2000:]
    assert again.stdout.split()[:3] == ["True", "2", "1"]
    assert not abandoned.exists() and recent.exists()
