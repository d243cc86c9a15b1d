"""Where the time of dynoc.compile's first call goes, piece by piece, in this
process: the capture (the call run under the evaluator), the cache lookup or
build, the model's load through libdynrt and the binding of its weights;
then the second call (the first that runs built code) and eager's call.

Run it twice with the same DYNOC_CACHE_DIR: the second run is the warm
first call that docs/perf-jit.md and docs/perf-jit-cuda.md report.

Usage: python bench/jit/first_call_parts.py MODEL BATCH [--cuda]
(MODEL from bench/cpu/models.py; on the GPU machine under tools/gpu_jit.sh's
environment.)
"""
import argparse
import functools
import pathlib
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "cpu"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model")
    ap.add_argument("batch", type=int)
    ap.add_argument("--cuda", action="store_true")
    ap.add_argument("--eager-first", action="store_true",
                    help="call the model eagerly once before compiling it: the compiled "
                         "first call then excludes what any first call in a process pays "
                         "(CUDA's lazy module loading, cuBLAS/cuDNN handles, allocator pools)")
    a = ap.parse_args()
    start = time.perf_counter()
    import torch
    import dynoc
    import models
    from dynoc import _region
    from dynoc.jit import built as _built
    from dynoc.runtime import model as _model
    spent = {}

    def timed(owner, name, label):
        fn = getattr(owner, name)

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            t = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                spent[label] = spent.get(label, 0.0) + time.perf_counter() - t
        setattr(owner, name, wrapper)

    timed(_region.Region, "_capture", "first call: capture and compile")
    timed(_region, "compile_variant", "  compile (after the capture)")
    timed(_built, "build", "    cache lookup or build")
    timed(_model.LoadedModel, "__init__", "    load (libdynrt)")
    m, x = models.make(a.model, a.batch)
    if a.cuda:
        m, x = m.cuda(), x.cuda()
        torch.backends.cuda.matmul.allow_tf32 = False
    sync = torch.cuda.synchronize if a.cuda else (lambda: None)
    print(f"imports and the model: {time.perf_counter() - start:.2f} s")
    compiled = dynoc.compile(m)
    with torch.no_grad():
        if a.eager_first:
            t = time.perf_counter()
            m(x)
            sync()
            spent["eager first call (before compiling)"] = time.perf_counter() - t
        for label, fn in (("first call", compiled), ("second call", compiled),
                          ("third call", compiled), ("eager call", m)):
            t = time.perf_counter()
            fn(x)
            sync()
            spent[label] = time.perf_counter() - t
    order = ["eager first call (before compiling)", "first call", "first call: capture and compile", "  compile (after the capture)",
             "    cache lookup or build", "    load (libdynrt)", "second call", "third call",
             "eager call"]
    for label in order:
        if label in spent:
            print(f"{label:36s} {spent[label] * 1e3:9.1f} ms")
    print("counters:", dict(dynoc.counters))


if __name__ == "__main__":
    main()
