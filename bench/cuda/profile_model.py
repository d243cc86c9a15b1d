"""Runs one built model of the GPU suite a few times, without CUDA graphs, so
that Nsight Compute can time its kernels one by one:

  ncu --clock-control none --metrics gpu__time_duration.sum \\
      python3 bench/cuda/profile_model.py build/gpu/models/mobilenet_block_b32_bf16

Inputs are the suite's example input for the folder's model, batch and dtype
(bench/cpu/models.py)."""
import pathlib
import re
import sys

import torch

import cuda_cases
import dynoc
import models


def main():
    folder = pathlib.Path(sys.argv[1])
    m = re.fullmatch(r"(\w+?)_b(\d+)(?:_(bf16))?", folder.name)
    if not m:
        sys.exit(f"profile_model: {folder} is not a model folder of build/gpu/models")
    name, batch, dtype = m.group(1), int(m.group(2)), m.group(3) or "f32"
    x = models.example_input(name, batch).cuda()
    if x.is_floating_point():
        x = x.to(cuda_cases.torch_dtype(dtype))
    built = dynoc.load(folder / "model.so", cuda_graphs=False)
    for _ in range(int(sys.argv[2]) if len(sys.argv) > 2 else 3):
        built(x)
    torch.cuda.synchronize()


if __name__ == "__main__":
    main()
