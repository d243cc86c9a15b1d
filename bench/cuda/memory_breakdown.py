"""Where a built model's device memory goes, on the GPU machine: the free
device memory taken by dynoc.load (weights, precomputed weights) and after
each of three calls (the context's workspace at the first, its CUDA graph at
the second, nothing at the third), next to torch's allocator (the outputs).

    python3 bench/cuda/memory_breakdown.py build/gpu/models/resnext_block_b32 ...

Inputs are the suite's example input for the folder's model, batch and dtype
(bench/cpu/models.py)."""
import pathlib
import sys

import torch

import cuda_cases
import dynoc


def free_mib():
    torch.cuda.synchronize()
    return torch.cuda.mem_get_info()[0] / 2**20


def main():
    for arg in sys.argv[1:]:
        folder = pathlib.Path(arg)
        x = cuda_cases.folder_input(folder, "memory_breakdown")
        before = free_mib()
        allocated = torch.cuda.memory_allocated()
        built = dynoc.load(folder / "model.so")
        loaded = free_mib()
        outs, calls = [], []
        for _ in range(3):
            outs.append(built(x))
            calls.append(loaded - free_mib())
        print(f"{folder.name}: load {before - loaded:.1f} MiB; after calls 1-3 "
              f"+{calls[0]:.1f} / +{calls[1]:.1f} / +{calls[2]:.1f} MiB; outputs "
              f"(torch's allocator) {(torch.cuda.memory_allocated() - allocated) / 2**20:.1f} MiB")
        del built, outs


if __name__ == "__main__":
    main()
