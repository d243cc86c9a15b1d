"""Prints where a model's time goes, from a dynoc profile: one run's kernels
by total time (tools/test_gpu.sh runs it on the GPU machine).

    python profile_summary.py MODEL.so [--top 8] [--runs 5] [--bf16] [input shape...]
"""
import argparse
import collections
import json
import os
import sys
import tempfile

import torch

import dynoc


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("shape", nargs="*", type=int)
    ap.add_argument("--top", type=int, default=8)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--int64", type=int, default=0, help="int64 inputs in [0, N)")
    ap.add_argument("--bf16", action="store_true", help="a bfloat16 input")
    a = ap.parse_args()
    built = dynoc.load(a.model)
    dev = built.device
    x = (torch.randint(0, a.int64, a.shape, device=dev) if a.int64
         else torch.randn(a.shape, device=dev,
                          dtype=torch.bfloat16 if a.bf16 else torch.float32))
    built(x)  # warm up outside the profile
    path = os.path.join(tempfile.mkdtemp(), "trace.json")
    with dynoc.profile(path):
        for _ in range(a.runs):
            built(x)
    spans = [e for e in json.load(open(path))["traceEvents"] if e["ph"] == "X"]
    runs = [s for s in spans if s["name"].startswith("run ")]
    total = collections.Counter()
    count = collections.Counter()
    for s in spans:
        if s["cat"] != "runtime":
            total[(s["name"], s["cat"])] += s["dur"] / len(runs)
            count[(s["name"], s["cat"])] += 1
    run_us = sum(r["dur"] for r in runs) / len(runs)
    busy = sum(total.values())
    print(f"{os.path.basename(os.path.dirname(a.model))}: run {run_us:.1f} us under the profile "
          f"(kernels synchronized), {sum(count.values()) // len(runs)} kernel spans, "
          f"{busy:.1f} us in them")
    for (name, cat), us in total.most_common(a.top):
        print(f"  {us:9.1f} us {100 * us / busy:5.1f}%  {name} [{cat}]")
    return 0


if __name__ == "__main__":
    sys.exit(main())
