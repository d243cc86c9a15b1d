"""Builds the graphs of a capture directory and runs each on the inputs the
program gave it (DYNOC_SAVE_EXAMPLES=1), against what eager PyTorch computed.
Shared by the capture corpus (test/capture) and the real-program suite
(test/realworld)."""
import os
import subprocess

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
DYNOC = os.path.join(ROOT, "bazel-bin", "tools", "dynoc", "dynoc")

# Ops that draw random numbers: a built graph holding one is not compared
# with eager element by element (test_cpu_ops checks their distribution).
RANDOM_OPS = {"aten.bernoulli.p", "aten.bernoulli", "aten.bernoulli.Tensor", "aten.uniform",
              "aten.normal_functional", "aten.rand", "aten.randn", "aten.rand_like",
              "aten.randn_like", "aten.randint", "aten.randint.low", "aten.randperm"}


class GraphResult:
    def __init__(self, name, built, error="", max_err=None, compared=False):
        self.name, self.built, self.error = name, built, error
        self.max_err, self.compared = max_err, compared


def _max_err(got, want):
    import torch
    if got.shape != want.shape or got.dtype != want.dtype:
        return float("inf")
    if got.numel() == 0:
        return 0.0
    if not got.is_floating_point():
        return 0.0 if torch.equal(got, want) else float("inf")
    both_nan = torch.isnan(got) & torch.isnan(want)
    diff = (got.double() - want.double()).abs().masked_fill(both_nan, 0)
    # relative beyond 1, absolute below: allclose(rtol=atol=err) holds
    return (diff / want.double().abs().clamp_min(1)).max().item()


def check_graphs(out, graphs, env=None):
    """One GraphResult per graph of `graphs` (manifest entries) in `out`."""
    import dynoc
    from safetensors.torch import load_file, save_file
    from torch.utils import dlpack
    results = []
    for g in graphs:
        mlir = out / g["mlir"]
        so = out / (g["name"] + ".so")
        b = subprocess.run([DYNOC, "build", str(mlir), "-o", str(so)], capture_output=True,
                           text=True, env=dict(os.environ, **(env or {})), timeout=900)
        if b.returncode != 0:
            results.append(GraphResult(g["name"], False, b.stderr))
            continue
        examples = out / (g["name"] + ".examples.safetensors")
        if not examples.exists() or set(g["ops"]) & RANDOM_OPS:
            results.append(GraphResult(g["name"], True))
            continue
        ex = load_file(str(examples))
        n_in = sum(1 for k in ex if k.startswith("input_"))
        # Weights as the graph saw them (the program may train them later),
        # given as other weights: the sidecar stays the file the build wrote.
        sidecar = so.with_suffix(".weights.safetensors")
        seen = None
        if sidecar.exists():
            weights = load_file(str(sidecar))
            weights.update({k[len("weight."):]: v for k, v in ex.items()
                            if k.startswith("weight.") and k[len("weight."):] in weights})
            seen = out / (g["name"] + ".seen.safetensors")
            save_file(weights, str(seen))
        model = dynoc.load(so, weights=seen)
        raw = model._model.run([dlpack.to_dlpack(ex[f"input_{i}"].contiguous())
                                for i in range(n_in)])
        got = [dlpack.from_dlpack(c) for c in raw]
        err = max([_max_err(t, ex[f"output_{i}"]) for i, t in enumerate(got)], default=0.0)
        results.append(GraphResult(g["name"], True, max_err=err, compared=True))
    return results
