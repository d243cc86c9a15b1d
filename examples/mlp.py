"""A small MLP, compiled the torch.compile way.

    python3 examples/mlp.py                 # plain PyTorch
    dynoc capture examples/mlp.py -o out/   # the same run, graphs recorded

With --save-io DIR it also writes its input and eager output as .npy, which the
README's demo compares against the compiled model.
"""
import argparse
import os

import numpy as np
import torch


class MLP(torch.nn.Module):
    def __init__(self, d_in=16, d_hidden=32, d_out=8):
        super().__init__()
        self.fc1 = torch.nn.Linear(d_in, d_hidden)
        self.fc2 = torch.nn.Linear(d_hidden, d_out)

    def forward(self, x):
        h = torch.relu(self.fc1(x))
        return self.fc2(h)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--save-io", metavar="DIR")
    args = parser.parse_args()
    torch.manual_seed(0)
    model = MLP().eval()
    x = torch.randn(4, 16)
    with torch.no_grad():
        expected = model(x)
        compiled = torch.compile(model)
        y = compiled(x)
    print("output sum:", round(float(y.sum()), 5))
    assert torch.allclose(y, expected)
    if args.save_io:
        os.makedirs(args.save_io, exist_ok=True)
        np.save(os.path.join(args.save_io, "x.npy"), x.numpy())
        np.save(os.path.join(args.save_io, "expected.npy"), expected.numpy())


if __name__ == "__main__":
    main()
