"""Runs one built model of the GPU suite a few times, without CUDA graphs, so
that Nsight Compute can time its kernels one by one:

  ncu --clock-control none --metrics gpu__time_duration.sum \\
      python3 bench/cuda/profile_model.py build/gpu/models/mobilenet_block_b32_bf16

Inputs are the suite's example input for the folder's model, batch and dtype
(bench/cpu/models.py)."""
import pathlib
import sys

import torch

import cuda_cases
import dynoc


def main():
    folder = pathlib.Path(sys.argv[1])
    x = cuda_cases.folder_input(folder, "profile_model")
    built = dynoc.load(folder / "model.so", cuda_graphs=False)
    for _ in range(int(sys.argv[2]) if len(sys.argv) > 2 else 3):
        built(x)
    torch.cuda.synchronize()


if __name__ == "__main__":
    main()
