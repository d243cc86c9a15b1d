"""Data-parallel training step under DistributedDataParallel, on 1, 2, 4 (and 8)
GPUs of one host with NCCL, or on CPU processes with gloo: eager DDP,
torch.compile + DDP (Dynamo's DDPOptimizer, the default), torch.compile with
compiled autograd (optimize_ddp="python_reducer") and dynoc's step .so (its
all-reduces bucketed in the graph, dynoc.TorchDistributedCommunicator). Each
rank has a fixed batch (bench/distributed/models.py: a GPT-2-small-sized and a
Llama-style 1024-wide decoder, bf16 autocast, SGD with momentum). Writes
docs/perf-distributed.md (GPUs) or docs/perf-distributed-cpu.md (gloo).

Two halves, because the GPU machine cannot capture or build:

    here:  .venv/bin/python bench/distributed/run.py prepare --device cuda \\
               [--models gpt2-small,llama-1024] [--worlds 1,2,4]
    there: python3 bench/distributed/run.py run --device cuda [--worlds 1,2,4] \\
               [--engines ENGINE,...] [--results DIR]
                                      (carry build/gpu/bin, build/gpu/distributed_bench)
    here:  .venv/bin/python bench/distributed/run.py table --device cuda --results DIR
           (a run split over several calls: each call's JSON files, gathered)
    (both, on the CPU: prepare --device cpu, then run --device cpu)

`prepare` of the GPU models on 4 ranks holds about 6 GB per capturing rank:
on a 24 GiB machine it needs swap (the kernel kills a rank otherwise).

`prepare` captures the step (capture_step.py) on WORLD gloo ranks for each
world size (the process group's size is part of the graph), checks that the
ranks recorded the same graph, builds it once (`dynoc build --target=...`) and
keeps the names, dtypes and shapes of its weights, and the values of its
scalar constants; the weights themselves (parameters, momentum buffers) are
made where the benchmark runs, from the same seed. `run` launches WORLD
processes per world size and model; every engine starts from the same state
(one eager DDP step from seed 0), runs 3 untimed steps, then the timed steps
in interleaved rounds (each step synchronized; the table has the slowest
rank's median). On GPUs a profile of 5 more steps per engine gives the
all-reduce time (NCCL kernels) and the part of it no other kernel overlaps
(exposed).
"""
import argparse
import copy
import datetime
import json
import os
import pathlib
import shutil
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import time

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE))
import models  # noqa: E402

DYNOC = ROOT / "bazel-bin" / "tools" / "dynoc" / "dynoc"
WARM = 3
ENGINES = ["eager DDP", "compile + DDPOptimizer", "compile + compiled autograd", "dynoc",
           "dynoc (NCCL communicator)", "dynoc (gloo communicator)"]


def device_engines(cuda):
    """The engines of a device: libdynrt's NCCL communicator is for GPUs, its
    gloo one for CPUs."""
    return [e for e in ENGINES if ("gloo" if cuda else "NCCL") not in e]


ST_DTYPES = {"F32": "float32", "F64": "float64", "BF16": "bfloat16", "F16": "float16",
             "I64": "int64", "I32": "int32", "BOOL": "bool", "U8": "uint8"}


def artifacts(device):
    return ROOT / "build" / ("gpu" if device == "cuda" else "cpu") / "distributed_bench"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch(argv, world, extra_env, timeout):
    """`world` processes of argv, one per rank; returns their (rc, out, err)."""
    port = str(free_port())
    procs = []
    for r in range(world):
        env = dict(os.environ, RANK=str(r), LOCAL_RANK=str(r), WORLD_SIZE=str(world),
                   MASTER_ADDR="127.0.0.1", MASTER_PORT=port, **extra_env)
        procs.append(subprocess.Popen([str(a) for a in argv], env=env, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True))
    results = []
    for p in procs:
        try:
            out, err = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            for q in procs:
                q.kill()
            raise RuntimeError(f"{argv[:3]}: a rank did not finish in {timeout} s")
        results.append((p.returncode, out, err))
    return results


def safetensors_header(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        return json.loads(f.read(n))


def st_save(tensors, path):
    """Writes a safetensors file (torch alone: the GPU machine may lack the
    safetensors package)."""
    import torch
    names = {v: k for k, v in ST_DTYPES.items()}
    header, offset, flat = {}, 0, []
    for k, t in tensors.items():
        t = t.detach().to("cpu").contiguous().reshape(-1)
        n = t.numel() * t.element_size()
        header[k] = {"dtype": names[str(t.dtype).replace("torch.", "")],
                     "shape": list(tensors[k].shape), "data_offsets": [offset, offset + n]}
        flat.append(t.view(torch.uint8) if n else None)
        offset += n
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for t in flat:
            if t is not None:
                f.write(memoryview(t.numpy()))


def st_load(path):
    import torch
    data = pathlib.Path(path).read_bytes()
    n = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + n])
    header.pop("__metadata__", None)
    out = {}
    for k, v in header.items():
        a, b = v["data_offsets"]
        dtype = getattr(torch, ST_DTYPES[v["dtype"]])
        raw = bytearray(data[8 + n + a:8 + n + b])
        t = torch.frombuffer(raw, dtype=dtype) if raw else torch.empty(0, dtype=dtype)
        out[k] = t.reshape(v["shape"])
    return out


def prepare(device, names, worlds):
    target = "cuda" if device == "cuda" else "cpu"
    for name in names:
        for world in worlds:
            d = artifacts(device) / name / f"w{world}"
            d.mkdir(parents=True, exist_ok=True)
            print(f"[bench/distributed] prepare {name} on {world} rank(s)", file=sys.stderr)
            with tempfile.TemporaryDirectory() as tmp:
                t0 = time.perf_counter()
                results = launch([DYNOC, "capture", HERE / "capture_step.py", "-o", f"{tmp}/cap",
                                  "--", name], world,
                                 {"OMP_NUM_THREADS": str(max(1, (os.cpu_count() or 2) // world))},
                                 timeout=3000)
                for r, (rc, _, err) in enumerate(results):
                    if rc != 0:
                        sys.exit(f"capture of {name} by rank {r} failed:\n{err[-3000:]}")
                capture_s = time.perf_counter() - t0
                caps = [pathlib.Path(tmp) / "cap" / (f"rank{r}" if world > 1 else "")
                        for r in range(world)]
                texts = {(c / "step_1.mlir").read_text() for c in caps}
                if len(texts) != 1:
                    sys.exit(f"{name}: the {world} ranks recorded different step graphs")
                shutil.copy(caps[0] / "step_1.mlir", d / "step_1.mlir")  # for rebuilds
                t0 = time.perf_counter()
                p = subprocess.run([DYNOC, "build", caps[0] / "step_1.mlir", f"--target={target}",
                                    "-o", d / "step.so"], capture_output=True, text=True)
                if p.returncode != 0:
                    sys.exit(f"dynoc build of {name} failed:\n{p.stderr[-3000:]}")
                build_s = time.perf_counter() - t0
            sidecar = d / "step.weights.safetensors"
            header = safetensors_header(sidecar)
            header.pop("__metadata__", None)
            # The scalars capture made constants (and the learning rate) ride
            # along; parameters and buffers are made from the seed where the
            # benchmark runs.
            small = {k: v for k, v in st_load(sidecar).items() if not k.startswith("G[")}
            st_save(small, d / "constants.safetensors")
            (d / "weights.json").write_text(json.dumps(
                {k: {"dtype": v["dtype"], "shape": v["shape"]} for k, v in header.items()}))
            (d / "build.json").write_text(json.dumps({"capture_s": capture_s,
                                                      "build_s": build_s}))
            sidecar.unlink()
            print(f"[bench/distributed] {name} w{world}: captured in {capture_s:.0f} s, "
                  f"built in {build_s:.0f} s", file=sys.stderr)
    if device == "cuda":
        bindir = artifacts(device).parent / "bin"
        bindir.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / "bazel-bin" / "lib" / "runtime" / "python" / "_dynrt.abi3.so",
                    bindir / "_dynrt.abi3.so")


# --- one rank of `run` ---------------------------------------------------------

def write_weights(path, spec, constants, scope):
    """A safetensors file of the step's weights: each named G[...] evaluated
    in `scope` (the model and optimizer in the start state), the rest from
    `constants`."""
    import torch
    tensors = {}
    for name, s in spec.items():
        dtype = getattr(torch, ST_DTYPES[s["dtype"]])
        if name.startswith("G["):
            v = eval(name, {"G": scope})  # noqa: S307 - names from our own capture
            t = torch.as_tensor(v).detach().to("cpu", dtype)
        else:
            t = constants[name].to(dtype)
        tensors[name] = t.reshape(s["shape"]).contiguous()
    st_save(tensors, path)


def exposed_communication(trace_path):
    """(all-reduce ms, exposed ms) of a Chrome trace's GPU kernels: NCCL
    kernel time, and the part of it during which no other kernel ran."""
    events = json.loads(pathlib.Path(trace_path).read_text()).get("traceEvents", [])
    comm, compute = [], []
    for e in events:
        if e.get("cat") != "kernel" or "dur" not in e:
            continue
        span = (float(e["ts"]), float(e["ts"]) + float(e["dur"]))
        (comm if "nccl" in e.get("name", "").lower() else compute).append(span)

    def union(spans):
        out = []
        for a, b in sorted(spans):
            if out and a <= out[-1][1]:
                out[-1][1] = max(out[-1][1], b)
            else:
                out.append([a, b])
        return out
    comm, compute = union(comm), union(compute)
    total = sum(b - a for a, b in comm)
    covered, j = 0.0, 0
    for a, b in comm:
        while j < len(compute) and compute[j][1] <= a:
            j += 1
        k = j
        while k < len(compute) and compute[k][0] < b:
            covered += min(b, compute[k][1]) - max(a, compute[k][0])
            k += 1
    return total / 1e3, (total - covered) / 1e3


def worker(a):
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel
    sys.path.insert(0, str(ROOT / "lib" / "capture" / "python"))
    import dynoc
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    cuda = a.device == "cuda"
    if cuda:
        torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
    dist.init_process_group("nccl" if cuda else "gloo")
    dev = torch.device("cuda", torch.cuda.current_device()) if cuda else torch.device("cpu")
    kind = "cuda" if cuda else "cpu"
    d = artifacts(a.device) / a.model / f"w{world}"
    x, y = (t.to(dev) for t in models.batch(a.model, rank))

    def sync():
        if cuda:
            torch.cuda.synchronize()

    def fresh(state=None):
        model = models.make(a.model).to(dev)
        if state:
            model.load_state_dict(state[0])
        ddp = DistributedDataParallel(model, device_ids=[dev.index] if cuda else None)
        opt = models.optimizer(ddp.parameters())
        if state:
            opt.load_state_dict(state[1])
        return ddp, opt

    def step_function(ddp, opt):
        def train_step(x, y):
            opt.zero_grad()
            loss = models.loss_of(ddp, x, y, kind)
            loss.backward()
            opt.step()
            return loss
        return train_step

    # The start state: one eager DDP step from the seed (the momentum
    # buffers exist, as in the captured step_1).
    ddp, opt = fresh()
    step_function(ddp, opt)(x, y)
    start = (copy.deepcopy(ddp.module.state_dict()), copy.deepcopy(opt.state_dict()))
    del ddp, opt
    import torch._dynamo
    engines, errors = {}, {}

    def make(engine):
        if engine.startswith("dynoc"):
            ddp, opt = fresh(start)
            path = pathlib.Path(tempfile.gettempdir()) / f"dynoc-bench-{os.getpid()}.safetensors"
            write_weights(path, json.loads((d / "weights.json").read_text()),
                          st_load(d / "constants.safetensors"),
                          {"model": ddp, "opt": opt})
            del ddp, opt
            communicator = dynoc.NcclCommunicator() if "NCCL" in engine \
                else dynoc.GlooCommunicator() if "gloo" in engine \
                else dynoc.TorchDistributedCommunicator()
            m = dynoc.load(d / "step.so", weights=path, communicator=communicator)
            path.unlink()
            return m
        # DDP picks its reducer (C++ or Python) from Dynamo's config when it
        # is made, and compiled autograd reads it at each backward: every call
        # of an engine runs under its own config.
        python_reducer = engine == "compile + compiled autograd"
        config = dict(optimize_ddp="python_reducer" if python_reducer else True,
                      compiled_autograd=python_reducer)
        with torch._dynamo.config.patch(**config):
            ddp, opt = fresh(start)
        fn = step_function(ddp, opt)
        if engine != "eager DDP":
            fn = torch.compile(fn)

        def call(x, y):
            with torch._dynamo.config.patch(**config):
                return fn(x, y)
        return call

    first = {}
    wanted = a.engines.split(",") if a.engines else ENGINES
    for engine in [e for e in device_engines(cuda) if e in wanted]:
        t0 = time.perf_counter()
        try:
            fn = make(engine)
            for _ in range(WARM):
                loss = fn(x, y)
            sync()
            engines[engine] = {"fn": fn, "times": [], "loss": loss}
            first[engine] = time.perf_counter() - t0
        except Exception as e:  # noqa: BLE001 - reported in the table
            errors[engine] = f"{type(e).__name__}: {str(e).splitlines()[0][:200]}"
        dist.barrier()
    for _ in range(a.rounds):
        for engine, e in engines.items():
            for _ in range(a.steps // a.rounds):
                sync()
                t0 = time.perf_counter()
                e["loss"] = e["fn"](x, y)
                sync()
                e["times"].append(time.perf_counter() - t0)
            dist.barrier()
    rows = {}
    for engine, e in engines.items():
        median = torch.tensor(statistics.median(e["times"]) * 1e3, dtype=torch.float64,
                              device=dev)
        dist.all_reduce(median, op=dist.ReduceOp.MAX)  # the slowest rank's
        rows[engine] = {"step_ms": median.item(), "loss": float(e["loss"]),
                        "first_s": first[engine]}
    if cuda and a.profile:
        from torch.profiler import ProfilerActivity, profile
        for engine, e in engines.items():
            with profile(activities=[ProfilerActivity.CUDA]) as prof:
                for _ in range(5):
                    e["fn"](x, y)
                sync()
            trace = pathlib.Path(tempfile.gettempdir()) / f"dynoc-bench-trace-{rank}.json"
            prof.export_chrome_trace(str(trace))
            comm, exposed = exposed_communication(trace)
            trace.unlink()
            rows[engine]["allreduce_ms"] = comm / 5
            rows[engine]["exposed_ms"] = exposed / 5
            dist.barrier()
    if rank == 0:
        pathlib.Path(a.out).write_text(json.dumps({"rows": rows, "errors": errors}))
    del engines
    dist.barrier()
    dist.destroy_process_group()


# --- the driver of `run` and the table -----------------------------------------

def machine(device):
    import platform
    if device == "cuda":
        import torch
        return f"{torch.cuda.device_count()}x {torch.cuda.get_device_name()}"
    return f"{os.cpu_count()}-core {platform.machine()} CPU"


def results_dir(a):
    return pathlib.Path(a.results) if a.results else artifacts(a.device) / "results"


def run(a):
    """Runs each (model, world size) and keeps its rows in the results folder
    (one JSON file each, so that runs split over several calls add up), then
    writes the table from every file there."""
    import torch
    names = [n for n in a.models.split(",")]
    worlds = [int(w) for w in a.worlds.split(",")]
    keep = results_dir(a)
    keep.mkdir(parents=True, exist_ok=True)
    for name in names:
        for world in worlds:
            if not (artifacts(a.device) / name / f"w{world}" / "step.so").exists():
                print(f"[bench/distributed] {name} w{world}: not prepared, skipped",
                      file=sys.stderr)
                continue
            if a.device == "cuda" and world > torch.cuda.device_count():
                continue
            print(f"[bench/distributed] {name} on {world} {a.device} rank(s)", file=sys.stderr)
            t0 = time.perf_counter()
            with tempfile.TemporaryDirectory() as tmp:
                out = pathlib.Path(tmp) / "rows.json"
                env = {"OMP_NUM_THREADS": "1"} if a.device == "cpu" else {}
                argv = [sys.executable, __file__, "worker", "--device", a.device, "--model", name,
                        "--steps", str(a.steps), "--rounds", str(a.rounds), "--out", out]
                if a.profile:
                    argv.append("--profile")
                if a.engines:
                    argv += ["--engines", a.engines]
                rs = launch(argv, world, env, timeout=a.timeout)
                bad = [(r, err) for r, (rc, _, err) in enumerate(rs) if rc != 0]
                if bad:
                    print(f"[bench/distributed] {name} w{world}: rank {bad[0][0]} failed:\n"
                          f"{bad[0][1][-3000:]}", file=sys.stderr)
                    result = {"rows": {}, "errors": {"all": bad[0][1][-300:]}}
                else:
                    result = json.loads(out.read_text())
            result.update(model=name, world=world, machine=machine(a.device),
                          torch=torch.__version__, cuda=torch.version.cuda,
                          date=str(datetime.date.today()), steps=a.steps, rounds=a.rounds)
            (keep / f"{name}-w{world}.json").write_text(json.dumps(result, indent=1))
            print(f"[bench/distributed] {name} w{world}: {time.perf_counter() - t0:.0f} s",
                  file=sys.stderr)
    write_table(a)


def write_table(a):
    """docs/perf-distributed(-cpu).md from the results folder's files."""
    cuda = a.device == "cuda"
    results = {}
    for f in sorted(results_dir(a).glob("*.json")):
        r = json.loads(f.read_text())
        results[(r["model"], r["world"])] = r
    if not results:
        sys.exit(f"no results in {results_dir(a)}")
    meta = next(iter(results.values()))
    names = [n for n in models.CONFIGS if any(k[0] == n for k in results)]
    worlds = sorted({k[1] for k in results})
    doc = ROOT / "docs" / ("perf-distributed.md" if cuda else "perf-distributed-cpu.md")
    lines = ["# Data-parallel training (DDP)" + ("" if cuda else " on CPU processes (gloo)"), "",
             f"Measured {meta['date']} by `bench/distributed/run.py run --device "
             f"{a.device}` on {meta['machine']} (torch {meta['torch']}"
             + (f", CUDA {meta['cuda']}, NCCL" if cuda else ", gloo, 1 thread per rank")
             + f"). One training step per call: forward under bf16 autocast, cross-entropy, "
             "backward, the gradients averaged over the ranks (DDP), SGD with momentum; a fixed "
             "batch per rank (weak scaling). Each engine starts from the same state, runs "
             f"{WARM} untimed steps, then {meta['steps']} timed steps in {meta['rounds']} "
             "interleaved rounds; the slowest rank's median step. Engines: eager "
             "`DistributedDataParallel`; "
             "`torch.compile` of the step with DDP (Dynamo's DDPOptimizer, the default); "
             "`torch.compile` with compiled autograd (`optimize_ddp=\"python_reducer\"`); "
             "dynoc's step `.so` (captured on each rank, built once; its all-reduces in "
             "25 MiB buckets, each in flight while the backward pass goes on) through "
             "`dynoc.TorchDistributedCommunicator` (torch.distributed's NCCL or gloo), and "
             + ("through libdynrt's own NCCL communicator (`dynoc.NcclCommunicator`). "
                if cuda else "through libdynrt's own gloo communicator "
                "(`dynoc.GlooCommunicator`). ") + "Scaling "
             "efficiency: the 1-rank step time over the N-rank one."
             + (" All-reduce and exposed: NCCL kernel time per step from a profile of 5 steps, "
                "and the part of it no other kernel overlapped." if cuda else ""), ""]
    geo = []
    for name in names:
        family, vocab, d, heads, layers, mlp, b, t = models.CONFIGS[name]
        params = sum(p.numel() for p in models.make(name).parameters())
        lines += [f"## {name}", "",
                  f"{family}, {layers} layers, width {d}, {heads} heads, MLP {mlp}, vocab "
                  f"{vocab}, {params / 1e6:.0f}M parameters; batch {b} x {t} tokens per rank.", "",
                  "| ranks | engine | step (ms) | vs eager | vs best torch.compile "
                  "| scaling efficiency | loss after the steps |"
                  + (" all-reduce (ms) | exposed |" if cuda else ""),
                  "|---:|---|---:|---:|---:|---:|---:|" + ("---:|---:|" if cuda else "")]
        one = results.get((name, 1), {}).get("rows", {})
        for world in worlds:
            res = results.get((name, world))
            if not res:
                continue
            rows = res["rows"]
            eager = rows.get("eager DDP", {}).get("step_ms", float("nan"))
            compiled = [rows[k]["step_ms"] for k in ENGINES[1:3] if k in rows]
            best = min(compiled) if compiled else float("nan")
            for engine in device_engines(cuda):
                if engine not in rows:
                    why = res["errors"].get(engine, res["errors"].get("all"))
                    if why is None:  # not run (run --engines)
                        continue
                    lines.append(f"| {world} | {engine} | failed: {why[:120]} | | | | |"
                                 + (" | |" if cuda else ""))
                    continue
                r = rows[engine]
                eff = one.get(engine, {}).get("step_ms", float("nan")) / r["step_ms"]
                line = (f"| {world} | {engine} | {r['step_ms']:.2f} | {eager / r['step_ms']:.2f}x "
                        f"| {best / r['step_ms']:.2f}x | {eff:.2f} | {r['loss']:.5g} |")
                if cuda:
                    ar, ex = r.get("allreduce_ms"), r.get("exposed_ms")
                    line += (f" {ar:.2f} | {100 * ex / ar:.0f}% |" if ar else " | |")
                lines.append(line)
            mine = [rows[k]["step_ms"] for k in ENGINES[3:] if k in rows]
            if mine and best == best:
                geo.append(best / min(mine))
        lines.append("")
    if geo:
        lines.append(f"dynoc (the faster of its two communicators) vs the best torch.compile "
                     f"configuration, geomean over the rows: "
                     f"{statistics.geometric_mean(geo):.2f}x.")
    doc.write_text("\n".join(lines) + "\n")
    print(f"wrote {doc}", file=sys.stderr)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("prepare", help="capture and build (here)")
    p.add_argument("--device", choices=["cuda", "cpu"], default="cuda")
    p.add_argument("--models", default=None)
    p.add_argument("--worlds", default=None)
    r = sub.add_parser("run", help="run the engines and write the table")
    r.add_argument("--device", choices=["cuda", "cpu"], default="cuda")
    r.add_argument("--models", default=None)
    r.add_argument("--worlds", default=None)
    r.add_argument("--steps", type=int, default=30)
    r.add_argument("--rounds", type=int, default=3)
    r.add_argument("--timeout", type=int, default=900)
    r.add_argument("--no-profile", dest="profile", action="store_false")
    r.add_argument("--engines", default=None,
                   help="comma-separated engines to run (default: all): " + ", ".join(ENGINES))
    r.add_argument("--results", default=None,
                   help="folder of the per-run JSON files (default: the artifacts' results/)")
    t = sub.add_parser("table", help="write the table from a results folder")
    t.add_argument("--device", choices=["cuda", "cpu"], default="cuda")
    t.add_argument("--results", default=None)
    w = sub.add_parser("worker")
    w.add_argument("--device", choices=["cuda", "cpu"])
    w.add_argument("--model")
    w.add_argument("--steps", type=int)
    w.add_argument("--rounds", type=int)
    w.add_argument("--out")
    w.add_argument("--profile", action="store_true")
    w.add_argument("--engines", default=None)
    a = ap.parse_args()
    if a.cmd == "table":
        write_table(a)
        return
    unknown = [e for e in (getattr(a, "engines", None) or "").split(",") if e and e not in ENGINES]
    if unknown:
        ap.error(f"unknown engine(s) {unknown}; the engines: {', '.join(ENGINES)}")
    if a.cmd != "worker":
        default_models = "gpt2-small,llama-1024" if a.device == "cuda" else "gpt2-mini,llama-mini"
        a.models = a.models or default_models
        a.worlds = a.worlds or ("1,2,4" if a.device == "cuda" else "1,2")
    if a.cmd == "prepare":
        prepare(a.device, a.models.split(","), [int(w) for w in a.worlds.split(",")])
    elif a.cmd == "run":
        a.profile = a.profile and a.device == "cuda"
        run(a)
    else:
        worker(a)


if __name__ == "__main__":
    main()
