"""Where a whole real-size model's GPU time goes (issue 51): one case of
bench/cuda/real_sizes.py run under torch.profiler (CUPTI sees every kernel in
the process, libdynrt's too), its kernels summed by name, the largest first,
with each one's share of the GPU time and its launch count per call.

  python3 bench/cuda/profile_real_sizes.py gpt2-small 8 512 [dynoc|torch.compile|eager]

Run it on the GPU machine with tools/gpu_jit.sh's environment (dynoc's engine
builds there). Each engine in its own process, as in real_sizes.py.
"""
import collections
import sys

import torch

from real_sizes import make

CALLS = 5


def main():
    name, batch, seq = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    engine = sys.argv[4] if len(sys.argv) > 4 else "dynoc"
    torch.backends.cuda.matmul.allow_tf32 = False
    model = make(name)
    ids = torch.randint(0, 1000, (batch, seq), device="cuda")
    if engine == "dynoc":
        import dynoc
        fn = dynoc.compile(model)
    elif engine == "torch.compile":
        fn = torch.compile(model)
    else:
        fn = model
    with torch.no_grad():
        for _ in range(3):
            fn(ids, use_cache=False)
        torch.cuda.synchronize()
        with torch.profiler.profile(
                activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
            for _ in range(CALLS):
                fn(ids, use_cache=False)
            torch.cuda.synchronize()
    if engine == "dynoc":
        import dynoc
        print("dynoc counters:", dict(dynoc.counters))
    total = collections.Counter()
    count = collections.Counter()
    for ev in prof.events():
        if ev.device_type == torch.autograd.DeviceType.CUDA:
            total[ev.name] += ev.device_time
            count[ev.name] += 1
    gpu_us = sum(total.values()) / CALLS
    print(f"{engine} {name} {batch}x{seq}: {gpu_us / 1000:.2f} ms of GPU time per call, "
          f"{sum(count.values()) // CALLS} kernels per call")
    print("| ms per call | share | launches per call | kernel |")
    print("|---:|---:|---:|---|")
    for kname, us in total.most_common(30):
        print(f"| {us / CALLS / 1000:.3f} | {100 * us / CALLS / gpu_us:.1f}% | "
              f"{count[kname] // CALLS} | {kname[:110]} |")


if __name__ == "__main__":
    main()
