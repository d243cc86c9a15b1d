#!/usr/bin/env python3
"""Builds what tools/test_multigpu.sh runs on a machine of several GPUs, here,
without a GPU: two programs, each captured by two gloo ranks on this
machine's CPUs (the graphs are the same for GPUs; this checks that both ranks
recorded the same graph) and built once with `dynoc build --target=cuda`:

- examples/distributed/train.py, data-parallel training: build/gpu/distributed/
  step.so (the gradients averaged by the step), ddp_step.so (by a
  DistributedDataParallel module), their weights and each rank's batch
  (data/);
- test/distributed/collectives_program.py, tensor-parallel layers and the
  four collectives: build/gpu/distributed/collectives/model.so and each
  rank's weight shards (weights<rank>.safetensors).

Carry build/gpu/bin and build/gpu/distributed.

usage: tools/build_multigpu_artifacts.py
"""
import os
import pathlib
import shutil
import socket
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
DYNOC = ROOT / "bazel-bin" / "tools" / "dynoc" / "dynoc"
OUT = ROOT / "build" / "gpu" / "distributed"
WORLD = 2


def capture_on_ranks(script, out, args):
    """`dynoc capture script -o out -- args` on every rank at once (gloo):
    rank r writes out/rank<r>; returns those folders."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = str(s.getsockname()[1])
    procs = []
    for r in range(WORLD):
        env = dict(os.environ, RANK=str(r), WORLD_SIZE=str(WORLD), MASTER_ADDR="127.0.0.1",
                   MASTER_PORT=port, OMP_NUM_THREADS="1")
        procs.append(subprocess.Popen([DYNOC, "capture", script, "-o", out, "--", *args],
                                      env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                      text=True))
    for r, p in enumerate(procs):
        _, err = p.communicate(timeout=300)
        if p.returncode != 0:
            sys.exit(f"capture of {script} by rank {r} failed:\n{err[-3000:]}")
    return [f"{out}/rank{r}" for r in range(WORLD)]


def build(graph, out):
    p = subprocess.run([DYNOC, "build", graph, "--target=cuda", "-o", out],
                       capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"dynoc build --target=cuda {graph} failed:\n{p.stderr[-3000:]}")


def same_on_ranks(caps, name):
    texts = {(pathlib.Path(c) / name).read_text() for c in caps}
    if len(texts) != 1:
        sys.exit(f"the ranks recorded different {name}")
    return pathlib.Path(caps[0]) / name


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        caps = capture_on_ranks(ROOT / "examples" / "distributed" / "train.py", f"{tmp}/dp",
                                [str(OUT / "data")])
        build(same_on_ranks(caps, "step_1.mlir"), OUT / "step.so")
        caps = capture_on_ranks(ROOT / "examples" / "distributed" / "train.py", f"{tmp}/ddp",
                                [str(OUT / "data"), "--ddp"])
        build(same_on_ranks(caps, "step_1.mlir"), OUT / "ddp_step.so")
        caps = capture_on_ranks(ROOT / "test" / "distributed" / "collectives_program.py",
                                f"{tmp}/tp", ["capture"])
        (OUT / "collectives").mkdir(exist_ok=True)
        build(same_on_ranks(caps, "graph_0.mlir"), OUT / "collectives" / "model.so")
        for r in range(WORLD):  # each rank's shards
            shutil.copy(pathlib.Path(caps[r]) / "weights.safetensors",
                        OUT / "collectives" / f"weights{r}.safetensors")
    bindir = OUT.parent / "bin"
    bindir.mkdir(parents=True, exist_ok=True)
    shutil.copy(ROOT / "bazel-bin" / "lib" / "runtime" / "python" / "_dynrt.abi3.so",
                bindir / "_dynrt.abi3.so")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
