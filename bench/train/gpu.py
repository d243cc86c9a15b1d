"""One training step (forward, backward, optimizer update) at batch 32 on the
GPU: PyTorch eager vs torch.compile (Inductor) vs dynoc's step model from
Python (dynoc.load) vs from C++ (examples/train, libdynrt alone). Writes
docs/perf-train-cuda.md. The models and optimizers are bench/train/run.py's.

Two halves, because the GPU machine cannot capture or build:

    here:  .venv/bin/python bench/train/gpu.py prepare      (writes build/gpu/train)
    there: python3 bench/train/gpu.py run [--steps 200]    (carry build/gpu)

`prepare` captures each model's step on the CPU (run.py's script: 3 steps,
then the model's and optimizer's state is saved), builds it with
`dynoc build --target=cuda`, and keeps the batch and that state. `run` starts
every engine from that state on the GPU: eager and Inductor load it into the
model and optimizer (moved to the GPU), dynoc's models hold it as their
weights. Every engine then runs the same steps, each step synchronized
(eager's and Inductor's by torch.cuda.synchronize, dynoc's C++ loop by copying
the loss back), in interleaved rounds; the first 3 steps of each are not
timed (Inductor compiles in its first, dynoc captures a CUDA graph in its
second). The loss after the last step must agree. Peak memory: what torch's
allocator peaked at from making the engine's model and optimizer through its
first steps (parameters, gradients, optimizer state, activations) for eager
and Inductor; for dynoc from Python, the device memory its load and first
steps took (weights, state, workspace, CUDA graph) plus torch's peak (its
outputs). TF32 is off for every engine.
"""
import argparse
import datetime
import importlib.util
import json
import os
import pathlib
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent


def _load(name, path):
    """A module from `path` under a name of its own (bench/cpu has a run.py too)."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# The models, optimizers and step script of the CPU benchmark.
cpu_bench = _load("dynoc_bench_train_cpu", ROOT / "bench" / "train" / "run.py")

ART = ROOT / "build" / "gpu" / "train"
WARM = cpu_bench.WARM


def prepare(models):
    """Captures and builds each model's step for the GPU into ART/<name>."""
    sys.path.insert(0, str(ROOT / "bench"))
    from runtime_overhead import machine
    env = dict(os.environ, OMP_NUM_THREADS=str(os.cpu_count()),
               PYTHONPATH=str(ROOT / "python"))
    with tempfile.TemporaryDirectory() as tmp:
        work = pathlib.Path(tmp)
        for name in models:
            print(f"[bench/train/gpu] prepare {name}", file=sys.stderr)
            setup, loss, optimizer = cpu_bench.MODELS[name]
            script = work / f"{name}.py"
            script.write_text(cpu_bench.SCRIPT.format(setup=setup, loss=loss,
                                                      optimizer=optimizer, warm=WARM))
            cap, data = work / f"{name}.cap", work / f"{name}.data"
            p = subprocess.run([cpu_bench.DYNOC, "capture", "-o", cap, script, "capture", "0",
                                data], capture_output=True, text=True, env=env)
            if p.returncode != 0:
                raise RuntimeError(f"capture of {name} failed:\n{p.stderr[-3000:]}")
            d = ART / name
            d.mkdir(parents=True, exist_ok=True)
            t0 = time.perf_counter()
            p = subprocess.run([cpu_bench.DYNOC, "build", cap / "step_1.mlir", "--target=cuda",
                                "-o", d / "step.so"], capture_output=True, text=True, env=env)
            if p.returncode != 0:
                raise RuntimeError(f"dynoc build of {name} failed:\n{p.stderr[-3000:]}")
            build_s = time.perf_counter() - t0
            for suffix in ("x.npy", "y.npy", "state.pt"):
                shutil.copy(f"{data}.{suffix}", d / suffix)
            (d / "build.json").write_text(json.dumps({"build_s": build_s,
                                                      "machine": machine()}))
    bindir = ART.parent / "bin"
    bindir.mkdir(parents=True, exist_ok=True)
    shutil.copy(ROOT / "bazel-bin/examples/train/train", bindir / "train")


def model_key(weight_name):
    """The state_dict key of a step model's parameter weight
    (G['model'][0].weight -> 0.weight), or None for another weight."""
    prefix = "G['model']"
    if not weight_name.startswith(prefix):
        return None
    return re.sub(r"\[(\d+)\]", r".\1", weight_name[len(prefix):]).lstrip(".")


class Eager:
    """A model and optimizer from `name`'s setup, on the GPU, in the state
    `prepare` saved."""

    def __init__(self, name):
        import numpy as np
        import torch
        from torch import nn
        setup, loss, optimizer = cpu_bench.MODELS[name]
        scope = {"torch": torch, "nn": nn, "sys": sys, "np": np}
        torch.manual_seed(0)
        exec(setup, scope)
        d = ART / name
        state = torch.load(d / "state.pt", weights_only=False)
        model = scope["model"]
        model.load_state_dict(state["model"])
        model.cuda()
        scope["model"] = model
        opt = eval(optimizer, scope)
        opt.load_state_dict(state["opt"])
        self.model, self.opt = model, opt
        self.x = torch.from_numpy(np.load(d / "x.npy")).cuda()
        self.y = torch.from_numpy(np.load(d / "y.npy")).cuda()
        scope.update(x=self.x, y=self.y, opt=opt)
        self.loss_expr = compile(loss, "<loss>", "eval")
        self.scope = scope

    def step(self, x, y):
        self.opt.zero_grad()
        loss = eval(self.loss_expr, dict(self.scope, x=x, y=y))
        loss.backward()
        self.opt.step()
        return loss


def cuda_library_env():
    import nvidia
    base = list(nvidia.__path__)[0]
    dirs = [os.path.join(base, "cu13", "lib"), os.path.join(base, "cudnn", "lib")]
    env = dict(os.environ)
    env["LD_LIBRARY_PATH"] = ":".join(dirs + [env.get("LD_LIBRARY_PATH", "")])
    return env


def bench_model(name, steps, rounds):
    import gc
    import torch
    import dynoc
    d = ART / name
    per_round = max(1, steps // rounds)
    total = WARM + per_round * rounds
    engines = {}
    mem = {}

    def timed_steps(fn, x, y, n):
        times, loss = [], None
        for _ in range(n):
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            loss = fn(x, y)
            torch.cuda.synchronize()
            times.append(time.perf_counter() - t0)
        return times, loss

    def setup_engine(key, make):
        gc.collect()
        torch.cuda.synchronize()
        torch.cuda.empty_cache()  # what earlier engines freed is not counted
        if hasattr(torch._C, "_cuda_clearCublasWorkspaces"):
            torch._C._cuda_clearCublasWorkspaces()
        torch.cuda.reset_peak_memory_stats()
        free0 = torch.cuda.mem_get_info()[0]
        base = torch.cuda.memory_allocated()
        t0 = time.perf_counter()
        fn, x, y, held = make()  # held: bytes outside torch's allocator
        # The untimed first steps (Inductor's compile, dynoc's CUDA graph).
        _, loss = timed_steps(fn, x, y, WARM)
        first_s = time.perf_counter() - t0
        torch.cuda.synchronize()
        peak = torch.cuda.max_memory_allocated() - base
        if key.startswith("dynoc"):
            mem[key] = (peak + free0 - torch.cuda.mem_get_info()[0]) / 2**20
        else:
            mem[key] = (peak + held) / 2**20
        engines[key] = {"fn": fn, "x": x, "y": y, "times": [], "first_s": first_s,
                        "loss": loss}

    def eager_engine(mode):
        def make():
            # Made after the peak's reset: its parameters, optimizer state
            # and batch are in the peak.
            e = Eager(name)
            if mode is None:
                return e.step, e.x, e.y, 0
            # Every model's step is the same function: without a reset, its
            # earlier compilations count against Dynamo's recompile limit
            # (past 8 it runs eagerly).
            torch._dynamo.reset()
            compiled = torch.compile(e.step, mode=mode)
            if mode != "reduce-overhead":
                return compiled, e.x, e.y, 0

            def step(x, y):
                # A new iteration of the CUDA graph trees; the loss is read
                # before the next replay overwrites it.
                torch.compiler.cudagraph_mark_step_begin()
                return compiled(x, y).detach().clone()
            return step, e.x, e.y, 0
        return make

    def dynoc_engine():
        import numpy as np
        x = torch.from_numpy(np.load(d / "x.npy")).cuda()
        y = torch.from_numpy(np.load(d / "y.npy")).cuda()
        m = dynoc.load(d / "step.so")
        return m, x, y, 0

    setup_engine("eager", eager_engine(None))
    setup_engine("inductor", eager_engine("default"))
    from torch._dynamo.utils import counters
    counters.clear()
    try:
        setup_engine("reduce-overhead", eager_engine("reduce-overhead"))
    except Exception as err:  # noqa: BLE001 - reported in the table
        print(f"[bench/train/gpu] {name}: reduce-overhead failed: {err}", file=sys.stderr)
    # Whether Inductor ran the step's graphs as CUDA graphs (it counts each
    # graph it skips, and logs why under TORCH_LOGS=perf_hints).
    cudagraph_skips = counters["inductor"]["cudagraph_skips"]
    setup_engine("dynoc (Python)", dynoc_engine)
    for _ in range(rounds):
        for key, e in engines.items():
            times, loss = timed_steps(e["fn"], e["x"], e["y"], per_round)
            e["times"] += times
            e["loss"] = loss
    rows = {}
    for key, e in engines.items():
        rows[key] = {"step_ms": statistics.median(e["times"]) * 1e3,
                     "loss": e["loss"].item(), "mib": mem[key],
                     "first_s": e["first_s"]}
    # Parameters after the steps: dynoc's against eager's.
    m = engines["dynoc (Python)"]["fn"]
    ref = dict(engines["eager"]["fn"].__self__.model.named_parameters())  # a bound step
    worst = 0.0
    for wname in m.weight_names():
        key = model_key(wname)
        if key in ref:
            got = m.read_weight(wname).double().cpu()
            want = ref[key].detach().double().cpu()
            worst = max(worst, ((got - want).norm() / want.norm().clamp_min(1e-30)).item())
    rows["dynoc (Python)"]["param_rel_err"] = worst
    if "reduce-overhead" in rows:
        rows["reduce-overhead"]["cudagraph_skips"] = cudagraph_skips
        rows["reduce-overhead"]["graph_breaks"] = sum(counters["graph_break"].values())
    build = json.loads((d / "build.json").read_text())
    rows["dynoc (Python)"]["first_s"] = build["build_s"]
    # The C++ loop, in a process of its own: the same number of steps.
    p = subprocess.run([ART.parent / "bin" / "train", d / "step.so", d / "x.npy", d / "y.npy",
                        str(total), "--step-times"], capture_output=True, text=True,
                       env=cuda_library_env())
    if p.returncode != 0:
        print(p.stderr[-2000:], file=sys.stderr)
        rows["dynoc (C++)"] = {"step_ms": float("nan"), "loss": float("nan"),
                               "mib": float("nan"), "first_s": build["build_s"]}
    else:
        lines = p.stdout.splitlines()
        times = [float(l.split()[-1]) * 1e-6 for l in lines if l.startswith("step time us")]
        losses = [float(l.split()[-1]) for l in lines if " loss " in l]
        rows["dynoc (C++)"] = {"step_ms": statistics.median(times[WARM:]) * 1e3,
                               "loss": losses[-1], "mib": float("nan"),
                               "first_s": build["build_s"]}
    return rows, build.get("machine", "the build machine")


def run(models, steps, rounds, out):
    import torch
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    os.environ.setdefault("TORCHINDUCTOR_FORCE_DISABLE_CACHES", "1")
    gpu = torch.cuda.get_device_name()
    lines = ["# Training step performance (CUDA)", "",
             f"Measured {datetime.date.today()} by `bench/train/gpu.py run` on an {gpu} "
             f"(torch {torch.__version__}, CUDA {torch.version.cuda}); batch 32, "
             f"{WARM} untimed steps, then {steps} timed steps in {rounds} interleaved "
             "rounds of the engines (median step time, each step synchronized); the "
             "models and optimizers of [perf-train.md](perf-train.md), every engine "
             "from the same state and batch, TF32 off. `reduce-overhead` is "
             "`torch.compile(step, mode=\"reduce-overhead\")` (CUDA graphs; each step "
             "marks a new iteration and copies its loss out). `first / build` is "
             "Inductor's compile with its first 3 steps, and `dynoc build --target=cuda` on the "
             "build machine. Memory: torch's allocator peak from making the model "
             "and optimizer through the first 3 steps (eager, Inductor), and the device "
             "memory dynoc's load and first 3 steps took plus torch's peak (dynoc).", ""]
    ratios_e, ratios_i, ratios_ro = [], [], []
    results = {}
    for name in models:
        print(f"[bench/train/gpu] {name}", file=sys.stderr)
        rows, build_machine = bench_model(name, steps, rounds)
        results[name] = rows
        eager, ind = rows["eager"]["step_ms"], rows["inductor"]["step_ms"]
        ro = rows.get("reduce-overhead", {}).get("step_ms", float("nan"))
        lines += [f"## {name}", "",
                  "| engine | step (ms) | vs eager | vs Inductor | loss after the last step "
                  "| memory (MiB) | first / build (s) |",
                  "|---|---:|---:|---:|---:|---:|---:|"]
        for engine, r in rows.items():
            first = "" if engine == "eager" else f"{r['first_s']:.2f}"
            mib = "" if r["mib"] != r["mib"] else f"{r['mib']:.1f}"
            lines.append(f"| {engine} | {r['step_ms']:.3f} | {eager / r['step_ms']:.2f}x "
                         f"| {ind / r['step_ms']:.2f}x | {r['loss']:.7g} | {mib} | {first} |")
        lines += ["", f"dynoc's parameters after the steps vs eager's: largest relative "
                      f"difference {rows['dynoc (Python)']['param_rel_err']:.2g}."]
        if "reduce-overhead" in rows:
            r = rows["reduce-overhead"]
            lines.append("reduce-overhead: " + (
                f"Inductor ran {r['cudagraph_skips']} of the step's graphs without CUDA "
                "graphs (TORCH_LOGS=perf_hints says why)"
                if r["cudagraph_skips"] else "the step's graphs ran as CUDA graphs")
                + f"; {r['graph_breaks']} graph break(s).")
        lines.append("")
        best = min(rows["dynoc (Python)"]["step_ms"], rows["dynoc (C++)"]["step_ms"])
        ratios_e.append(eager / best)
        ratios_i.append(ind / best)
        if ro == ro:
            ratios_ro.append(ro / best)
    geo = statistics.geometric_mean
    lines += [f"Geomean, dynoc (the faster of Python and C++): {geo(ratios_e):.2f}x eager, "
              f"{geo(ratios_i):.2f}x Inductor"
              + (f", {geo(ratios_ro):.2f}x Inductor with CUDA graphs (reduce-overhead, "
                 f"{len(ratios_ro)} models)" if ratios_ro else "") + ".", ""]
    text = "\n".join(lines)
    pathlib.Path(out).mkdir(parents=True, exist_ok=True)
    (pathlib.Path(out) / "perf-train-cuda.md").write_text(text)
    (pathlib.Path(out) / "perf-train-cuda.json").write_text(json.dumps(results, indent=1))
    print(text)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("prepare", help="capture and build the steps (the build machine)")
    p.add_argument("--models", default=",".join(cpu_bench.MODELS))
    r = sub.add_parser("run", help="time the engines (the GPU machine)")
    r.add_argument("--models", default=",".join(cpu_bench.MODELS))
    r.add_argument("--steps", type=int, default=200)
    r.add_argument("--rounds", type=int, default=4)
    r.add_argument("--out", default=str(ROOT / "docs"),
                   help="folder for perf-train-cuda.md and .json")
    args = parser.parse_args()
    if args.cmd == "prepare":
        prepare(args.models.split(","))
    else:
        run(args.models.split(","), args.steps, args.rounds, args.out)


if __name__ == "__main__":
    main()
