"""torch.distributed programs under dynoc, two processes with gloo on this
machine's CPUs (OMP_NUM_THREADS=1): each rank captures the program (the
in-place collectives rewritten into functional ones, functional ones as
written), both ranks' graphs are the same text with the expected collective
and wait ops and no break, one build serves both ranks, and each rank's run
through libdynrt with dynoc.TorchDistributedCommunicator equals its eager run;
tensor-parallel linear layers (column- then row-parallel; each rank loads
the one .so with its own capture's weights file: its shards) equal the
one-process MLP. A rank that loads other graphs, a group of another size, a
model run before a communicator is bound, and a collective dynoc cannot
capture (async_op=True) each say so."""
import json
import os
import socket
import subprocess
import sys
import time

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
DYNOC = os.path.join(ROOT, "bazel-bin", "tools", "dynoc", "dynoc")
PYTHONPATH = os.path.join(ROOT, "lib", "capture", "python")
TIMEOUT_S = 120

pytest.importorskip("torch.distributed")

PROGRAM = os.path.join(HERE, "collectives_program.py")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def ranks(argv_of_rank, world=2, extra_env=None, timeout=TIMEOUT_S):
    """Runs `world` processes (argv_of_rank(r)), one per rank, with gloo's
    environment; returns their (rc, stdout, stderr). A rendezvous port that
    another process took between free_port() and the ranks' start is tried
    again with another."""
    for attempt in range(3):
        results = _launch(argv_of_rank, world, extra_env, timeout)
        if not any("EADDRINUSE" in err or "address already in use" in err.lower()
                   for _, _, err in results):
            return results
    return results


def _launch(argv_of_rank, world, extra_env, timeout):
    port = str(free_port())
    procs = []
    for r in range(world):
        env = dict(os.environ, RANK=str(r), WORLD_SIZE=str(world), MASTER_ADDR="127.0.0.1",
                   MASTER_PORT=port, OMP_NUM_THREADS="1",
                   PYTHONPATH=os.pathsep.join([PYTHONPATH, os.environ.get("PYTHONPATH", "")]),
                   **(extra_env or {}))
        procs.append(subprocess.Popen([str(a) for a in argv_of_rank(r)], env=env,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                      text=True))
    results = []
    for p in procs:
        try:
            out, err = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            for q in procs:
                q.kill()
            raise AssertionError(f"a rank did not finish in {timeout} s (a hang)")
        results.append((p.returncode, out, err))
    return results


@pytest.fixture(scope="module")
def captured(tmp_path_factory):
    """Both ranks' captures of PROGRAM and one build of rank 0's graph."""
    if not os.path.exists(DYNOC):
        pytest.fail(f"{DYNOC} is not built; run `bazel build //...` first")
    d = tmp_path_factory.mktemp("dist")
    # Each rank of the launch writes d/cap/rank<R> (dynoc capture reads RANK).
    for rc, out, err in ranks(lambda r: [DYNOC, "capture", PROGRAM, "-o", d / "cap",
                                         "--", "capture"]):
        assert rc == 0, err[-3000:]
    p = subprocess.run([DYNOC, "build", d / "cap" / "rank0" / "graph_0.mlir", "-o",
                        d / "model.so"],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr[-3000:]
    return d


def test_every_rank_records_the_same_graph_with_its_collectives(captured):
    g0 = (captured / "cap" / "rank0" / "graph_0.mlir").read_text()
    g1 = (captured / "cap" / "rank1" / "graph_0.mlir").read_text()
    assert g0 == g1, "the ranks' graphs differ"
    manifest = json.loads((captured / "cap" / "rank0" / "manifest.json").read_text())
    assert len(manifest["graphs"]) == 1, manifest.get("breaks")
    count = {op: g0.count(f'"dynoc.{op}"') for op in
             ("all_reduce", "broadcast", "all_gather_into_tensor", "reduce_scatter_tensor",
              "all_to_all_single", "wait_tensor")}
    assert count == {"all_reduce": 2, "broadcast": 1, "all_gather_into_tensor": 1,
                     "reduce_scatter_tensor": 1, "all_to_all_single": 1,
                     "wait_tensor": 6}, count
    assert 'reduce_op = "max"' in g0 and 'group_name = "0"' in g0
    assert "group_size = 2 : i64" in g0


@pytest.mark.parametrize("communicator", ["torch", "gloo"])
def test_each_rank_runs_the_built_model_as_eager_runs(captured, communicator):
    # One .so for every rank; each rank's weight shards are its capture's
    # weights file (the same names, dtypes and shapes on every rank). "gloo":
    # through libdynrt's own gloo communicator (libdynrt_gloo.so).
    env = {"COMMUNICATOR": "gloo"} if communicator == "gloo" else None
    results = ranks(lambda r: [sys.executable, PROGRAM, "run", captured / "model.so",
                               "bound", captured / "cap" / f"rank{r}" / "weights.safetensors"],
                    extra_env=env)
    for r, (rc, out, err) in enumerate(results):
        assert rc == 0, f"rank {r}: {out}{err[-3000:]}"
        line = next(l for l in out.splitlines() if l.startswith("RESULT"))
        fields = dict(kv.split("=") for kv in line.split()[1:])
        assert float(fields["worst"]) <= 1e-5, line
        assert float(fields["tp"]) <= 1e-5, line


@pytest.mark.parametrize("communicator", ["torch", "gloo"])
def test_a_rank_with_other_graphs_fails_on_every_rank_naming_it(captured, tmp_path,
                                                                communicator):
    # Rank 1 loads a model whose graph differs (another op after the MLP).
    other = tmp_path / "prog.py"
    other.write_text(open(PROGRAM).read().replace("z = y * 2", "z = y * 3"))
    for rc, out, err in ranks(lambda r: [DYNOC, "capture", other, "-o", tmp_path / "cap",
                                         "--", "capture"]):
        assert rc == 0, err[-3000:]
    p = subprocess.run([DYNOC, "build", tmp_path / "cap" / "rank0" / "graph_0.mlir", "-o",
                        tmp_path / "other.so"], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    results = ranks(lambda r: [sys.executable, PROGRAM, "run",
                               captured / "model.so" if r == 0 else tmp_path / "other.so"],
                    extra_env={"COMMUNICATOR": "gloo"} if communicator == "gloo" else None)
    for r, (rc, out, err) in enumerate(results):
        assert rc != 0, f"rank {r} ran: {out}"
        assert "loaded other graphs than rank" in err and f"rank(s) {1 - r}" in err, err[-2000:]
        assert "no collective was issued" in err


def test_a_group_of_another_size_is_refused(captured, tmp_path):
    # Captured by one process: its group had 1 rank; run by two.
    for rc, out, err in ranks(lambda r: [DYNOC, "capture", PROGRAM, "-o", tmp_path / "cap",
                                         "--", "capture"], world=1):
        assert rc == 0, err[-3000:]
    p = subprocess.run([DYNOC, "build", tmp_path / "cap" / "graph_0.mlir", "-o",
                        tmp_path / "one.so"], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    results = ranks(lambda r: [sys.executable, PROGRAM, "run", tmp_path / "one.so"])
    for rc, out, err in results:
        assert rc != 0
        assert ("was captured with process group '0' of 1 ranks; the communicator's "
                "has 2") in err, err[-2000:]


def test_a_model_with_collectives_needs_a_communicator(captured):
    results = ranks(lambda r: [sys.executable, PROGRAM, "run", captured / "model.so",
                               "unbound"])
    for rc, out, err in results:
        assert rc == 3, out + err[-2000:]
        assert "runs collectives over process group '0': bind a communicator first" in out


def test_a_collective_dynoc_cannot_capture_is_a_break_with_its_reason(tmp_path):
    prog = tmp_path / "prog.py"
    prog.write_text(
        "import torch, torch.distributed as dist\n"
        "dist.init_process_group('gloo')\n"
        "@torch.compile\n"
        "def f(x):\n"
        "    y = x * 2\n"
        "    dist.all_reduce(y, async_op=True).wait()\n"
        "    return y + 1\n"
        "f(torch.ones(4))\n")
    for rc, out, err in ranks(lambda r: [DYNOC, "capture", prog, "-o", tmp_path / "cap"],
                              world=1):
        assert rc == 0, err[-3000:]
    report = (tmp_path / "cap" / "report.txt").read_text()
    assert "c10d.allreduce_" in report and "async_op=True" in report, report


@pytest.mark.parametrize("ddp", [False, True], ids=["by_hand", "ddp_module"])
def test_data_parallel_training_from_the_so_equals_eager(tmp_path, ddp):
    """examples/distributed: each rank captures the data-parallel step (the
    gradients all-reduced to their mean by the step itself, or by a
    DistributedDataParallel module: no break either way), one build serves
    both ranks, and 10 steps from the .so leave every rank with eager's
    parameters (eager DDP's for the module), the same on both ranks."""
    train = os.path.join(ROOT, "examples", "distributed", "train.py")
    run_py = os.path.join(ROOT, "examples", "distributed", "run.py")
    data = tmp_path / "data"
    flag = ["--ddp"] if ddp else []
    for rc, out, err in ranks(lambda r: [DYNOC, "capture", train, "-o", tmp_path / "cap",
                                         "--", data, *flag]):
        assert rc == 0, err[-3000:]
        assert "[dynoc capture] rank" in err  # each rank says where it writes
    step = (tmp_path / "cap" / "rank0" / "step_1.mlir").read_text()
    # The ranks' graphs are the same once canonicalized, as every build does:
    # autograd may leave an `aten.detach` (an identity) in one rank's and not the
    # other's, since whether it steals a gradient depends on who else holds it
    # at that moment (gloo's in-flight work included).
    canonical = [subprocess.run([DYNOC, "opt", "--pass", "dynoc-canonicalize",
                                 tmp_path / "cap" / rank / "step_1.mlir"],
                                capture_output=True, text=True, check=True).stdout
                 for rank in ("rank0", "rank1")]
    assert canonical[0] == canonical[1]
    assert step.count('"dynoc.all_reduce"') == 4 and 'reduce_op = "avg"' in step
    report = (tmp_path / "cap" / "rank0" / "report.txt").read_text()
    reasons = report.split("break reasons:")[1].split("training step")[0]
    assert "c10d" not in reasons and "in-place op" not in reasons, report
    p = subprocess.run([DYNOC, "build", tmp_path / "cap" / "rank0" / "step_1.mlir", "-o",
                        tmp_path / "step.so"], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    # The build merges the four gradients' all-reduces into one bucket (they
    # are under DDP's 1 MiB first bucket), issued where the last gradient is
    # computed, its wait where the optimizer first reads a gradient.
    p = subprocess.run([DYNOC, "build", tmp_path / "cap" / "rank0" / "step_1.mlir",
                        "--emit=mlir", "-o", tmp_path / "built.mlir"],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    built = (tmp_path / "built.mlir").read_text()
    assert built.count('"dynoc.all_reduce"') == 1, built
    assert built.count("aten.slice.Tensor") == 4, built
    # Through torch.distributed's gloo group, then libdynrt's own gloo
    # communicator (no Python in the collectives).
    for communicator in ("torch", "gloo"):
        results = ranks(lambda r: [sys.executable, run_py, tmp_path / "step.so", data,
                                   "--steps", "10", "--communicator", communicator, *flag])
        for r, (rc, out, err) in enumerate(results):
            assert rc == 0, f"{communicator} rank {r}: {out}{err[-3000:]}"
            assert "the same on every rank: True -> MATCH" in out, out


def test_ddp_gradient_accumulation_under_no_sync_is_ddps(tmp_path):
    """Two micro-batches, the first under no_sync(): the recorded step
    averages the accumulated gradient as DDP does (equal to eager DDP in
    the same process), in one training-step graph."""
    prog = os.path.join(HERE, "ddp_accumulation_program.py")
    for r, (rc, out, err) in enumerate(
            ranks(lambda r: [DYNOC, "capture", prog, "-o", tmp_path / "cap"])):
        assert rc == 0, err[-3000:]
        diff = float(out.split("max param diff vs eager DDP:")[1].split()[0])
        assert diff <= 1e-6, out
        step = (tmp_path / "cap" / f"rank{r}" / "step_0.mlir").read_text()
        assert step.count('"dynoc.all_reduce"') == 4, step.count('"dynoc.all_reduce"')


def capture_on_both_ranks(prog, tmp_path):
    """`dynoc capture PROG -o tmp_path/cap -- capture` on two gloo ranks."""
    for rc, out, err in ranks(lambda r: [DYNOC, "capture", prog, "-o", tmp_path / "cap",
                                         "--", "capture"]):
        assert rc == 0, err[-3000:]


def build_rank0_graph(tmp_path):
    """Rank 0's graph_0 built into tmp_path/m.so (both ranks load it)."""
    p = subprocess.run([DYNOC, "build", tmp_path / "cap" / "rank0" / "graph_0.mlir", "-o",
                        tmp_path / "m.so"], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr[-3000:]


def test_coalesced_collectives_record_per_tensor_and_run_as_eager(tmp_path):
    """_c10d_functional.all_reduce_coalesced (and its all-gather and
    reduce-scatter kin) record one dynoc collective per tensor; the built
    model's results equal eager's on both ranks. Object collectives and
    barrier are breaks with their reasons."""
    prog = tmp_path / "prog.py"
    prog.write_text(
        "import sys, torch, torch.distributed as dist\n"
        "dist.init_process_group('gloo')\n"
        "fc = torch.ops._c10d_functional\n"
        "def f(a, b):\n"
        "    x, y = fc.all_reduce_coalesced([a * 2, b + 1], 'sum', '0')\n"
        "    g, h = fc.all_gather_into_tensor_coalesced([a, b], 2, '0')\n"
        "    r, = fc.reduce_scatter_tensor_coalesced([b * 3], 'avg', 2, '0')\n"
        "    w = fc.wait_tensor\n"
        "    return w(x) + 1, w(y), w(g), w(h), w(r)\n"
        "torch.manual_seed(dist.get_rank())\n"
        "a, b = torch.randn(2, 3), torch.randn(4, 3)\n"
        "if sys.argv[1] == 'capture':\n"
        "    torch.compile(f)(a, b)\n"
        "    @torch.compile\n"
        "    def g(t):\n"
        "        out = [None]\n"
        "        dist.all_gather_object(out * 2, {'rank': 0})\n"
        "        dist.barrier()\n"
        "        return t + 1\n"
        "    g(a)\n"
        "else:\n"
        "    import dynoc\n"
        "    m = dynoc.load(sys.argv[2], communicator=dynoc.TorchDistributedCommunicator())\n"
        "    got, want = m(a, b), f(a, b)\n"
        "    worst = max(((p - q).abs().max()).item() for p, q in zip(got, want))\n"
        "    print('WORST', worst)\n")
    capture_on_both_ranks(prog, tmp_path)
    g0 = (tmp_path / "cap" / "rank0" / "graph_0.mlir").read_text()
    assert g0 == (tmp_path / "cap" / "rank1" / "graph_0.mlir").read_text()
    count = {op: g0.count(f'"dynoc.{op}"') for op in
             ("all_reduce", "all_gather_into_tensor", "reduce_scatter_tensor")}
    assert count == {"all_reduce": 2, "all_gather_into_tensor": 2,
                     "reduce_scatter_tensor": 1}, count
    report = (tmp_path / "cap" / "rank0" / "report.txt").read_text()
    assert "c10d.barrier" in report, report
    build_rank0_graph(tmp_path)
    for r, (rc, out, err) in enumerate(ranks(
            lambda r: [sys.executable, prog, "run", tmp_path / "m.so"])):
        assert rc == 0, f"rank {r}: {out}{err[-3000:]}"
        assert float(out.split("WORST")[1].split()[0]) <= 1e-6, out


@pytest.mark.parametrize("ending", ["no_destroy", "destroy_while_held"])
def test_a_rank_exits_cleanly_right_after_its_last_collective(tmp_path, ending):
    """A program that runs a built model through TorchDistributedCommunicator
    and exits right after: gloo's run loop drops its last reference to the
    finished all-reduce (and the Python tensors it holds) a moment after
    wait() returns, and did so once the interpreter was finalizing:
    `terminate called without an active exception`, exit -6 (issue 49).
    no_destroy: the program never destroys its group (dynoc's exit hook
    does). destroy_while_held: it calls destroy_process_group, but something
    still holds the group (a DistributedDataParallel module does), so its run
    loop lives on; the communicator keeps finished collectives alive so that
    the run loop never drops the last reference. Each rank is pinned to one
    CPU, which made the run loop lose the race about every other run."""
    prog = tmp_path / "prog.py"
    prog.write_text(
        "import sys, torch, torch.distributed as dist\n"
        "dist.init_process_group('gloo')\n"
        "held = dist.group.WORLD\n"
        "def f(a):\n"
        "    dist.all_reduce(a)\n"
        "    return a * 2\n"
        "a = torch.ones(64) * (dist.get_rank() + 1)\n"
        "if sys.argv[1] == 'capture':\n"
        "    torch.compile(f)(a)\n"
        "else:\n"
        "    import dynoc\n"
        "    m = dynoc.load(sys.argv[2], communicator=dynoc.TorchDistributedCommunicator())\n"
        "    print('SUM', m(a)[0].item(), flush=True)\n"
        f"    if {ending == 'destroy_while_held'!r}:\n"
        "        dist.destroy_process_group()\n")
    capture_on_both_ranks(prog, tmp_path)
    build_rank0_graph(tmp_path)
    cpus = sorted(os.sched_getaffinity(0))
    for attempt in range(6):
        for r, (rc, out, err) in enumerate(ranks(lambda r: [
                "taskset", "-c", str(cpus[r % len(cpus)]), sys.executable, prog, "run",
                tmp_path / "m.so"])):
            assert rc == 0 and "terminate called" not in err, \
                f"run {attempt}, rank {r}: exit {rc}\n{out}{err[-3000:]}"
            assert out.split() == ["SUM", "6.0"], out


def test_libdynrts_nccl_communicator_says_what_it_lacks():
    """dynrt_nccl_communicator_create on a machine without NCCL (this one's
    torch is the CPU build) names the library it cannot load; arguments out
    of range are refused before any library is needed. (On GPUs,
    tools/test_multigpu.sh trains with it.)"""
    sys.path.insert(0, PYTHONPATH)
    from dynoc.runtime import model as _model
    _dynrt = _model._dynrt
    with pytest.raises(_dynrt.Error, match="rank 2 of 2 ranks on device 0"):
        _dynrt.nccl_communicator(bytes(128), 2, 2, 0, "0", 1000)
    with pytest.raises(ValueError, match="128 bytes"):
        _dynrt.nccl_communicator(bytes(4), 2, 0, 0, "0", 1000)
    try:
        _dynrt.nccl_unique_id()
    except _dynrt.Error as e:
        assert "libnccl.so.2" in str(e) or "libcudart.so.13" in str(e), str(e)
    else:
        pytest.skip("this machine has NCCL and the CUDA runtime")


def test_libdynrts_gloo_communicator_bounds_its_rendezvous(tmp_path):
    """dynrt_gloo_communicator_create refuses a rank out of range at once, and
    a rendezvous whose other rank never comes fails within its timeout with
    DYNRT_DEADLINE_EXCEEDED naming the store, rather than hanging."""
    sys.path.insert(0, PYTHONPATH)
    from dynoc.runtime import communicators as _communicators
    from dynoc.runtime import model as _model
    _communicators._default_gloo_plugin()
    _dynrt = _model._dynrt
    with pytest.raises(_dynrt.Error, match="rank 2 of 2 ranks"):
        _dynrt.gloo_communicator(str(tmp_path), 2, 2, "0", None, 1000)
    start = time.monotonic()
    with pytest.raises(_dynrt.Error) as e:
        _dynrt.gloo_communicator(str(tmp_path), 2, 0, "0", None, 1500)
    assert time.monotonic() - start < 30
    assert "rank 0 of 2" in str(e.value) and str(tmp_path) in str(e.value)
    assert "timeout" in str(e.value).lower(), e.value  # DYNRT_DEADLINE_EXCEEDED


def test_a_communicator_of_another_abi_version_is_refused(captured):
    """A dynrt_communicator_t whose abi_version libdynrt does not read (it
    takes 2, which ends before graph_replay, and 3) is refused before any
    of its functions is called, naming both versions."""
    import ctypes

    import dynoc
    from dynoc.runtime import communicators as _communicators
    model = dynoc.load(str(captured / "model.so"))
    for version in (1, 4, 99):
        table = _communicators._Communicator(version)
        with pytest.raises(RuntimeError, match=f"the communicator has ABI version {version}, "
                                               "this runtime 2 or 3"):
            model._model.set_communicator(ctypes.addressof(table))
    # Version 2 gets past the version check to the table's functions.
    table = _communicators._Communicator(2)
    with pytest.raises(RuntimeError, match="the communicator's 'group_size' is null"):
        model._model.set_communicator(ctypes.addressof(table))


def test_torch_communicator_offers_cuda_graphs_only_over_nccl(tmp_path):
    """dynoc.TorchDistributedCommunicator is an ABI 3 table whose graph_replay
    (which lets a context's CUDA graphs hold the collectives) is set when the
    default group is NCCL's or the caller asks, and null over gloo: gloo's
    collectives cannot be captured into a CUDA graph. (On GPUs,
    tools/test_multigpu.sh checks that its DDP steps replay CUDA graphs.)"""
    import torch.distributed as dist

    import dynoc
    dist.init_process_group("gloo", init_method=f"file://{tmp_path / 'store'}",
                            rank=0, world_size=1)
    try:
        c = dynoc.TorchDistributedCommunicator()
        assert c.cuda_graphs is False
        assert c._struct.abi_version == 3 and not c._struct.graph_replay
        forced = dynoc.TorchDistributedCommunicator(cuda_graphs=True)
        assert forced.cuda_graphs is True and forced._struct.graph_replay
        assert forced._struct.graph_replay(None, None, 0) == 0
    finally:
        dist.destroy_process_group()
