"""Writes dyn_mlp.safetensors: deterministic weights the runtime tests recompute.

fc.weight[i][j] = ((i * 16 + j) % 7) * 0.1 - 0.3, fc.bias[i] = 0.05 * i - 0.2.
"""
import pathlib

import torch
from safetensors.torch import save_file

w = torch.tensor([[((i * 16 + j) % 7) * 0.1 - 0.3 for j in range(16)] for i in range(8)],
                 dtype=torch.float32)
b = torch.tensor([0.05 * i - 0.2 for i in range(8)], dtype=torch.float32)
save_file({"fc.weight": w, "fc.bias": b}, str(pathlib.Path(__file__).with_name("dyn_mlp.safetensors")))
