"""Trains a small MLP on a synthetic regression task, torch.compile style.

    python3 examples/train/train.py --steps 23          # plain PyTorch
    dynoc capture examples/train/train.py -o out/train  # 3 steps, graphs recorded
    dynoc build out/train/step_1.mlir -o out/train/train.so
    bazel-bin/examples/train/train out/train/train.so out/train/data/x.npy \
        out/train/data/y.npy 20

Under `dynoc capture`, the compiled `train_step` records a forward graph, a
backward graph and the SGD update; the second step recompiles once (the momentum
buffers appear) and its graphs are stitched into `step_1.mlir`, one training step
per call (docs/training.md). The weights file holds the parameters and momentum
buffers after the last captured step, so the C++ loop continues from there: its
losses are eager's losses of steps 4, 5, ... (`--steps 23 --losses-from 3`).

--save-data DIR writes the batch (x.npy, y.npy); --save-losses FILE writes the
losses printed, as .npy.
"""
import torch

import loop


class MLP(torch.nn.Module):
    def __init__(self, d_in=8, d_hidden=32):
        super().__init__()
        self.fc1 = torch.nn.Linear(d_in, d_hidden)
        self.fc2 = torch.nn.Linear(d_hidden, 1)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


def main():
    args = loop.arguments("an MLP regressor with SGD and momentum")
    torch.manual_seed(0)
    model = MLP()
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    x = torch.randn(64, 8)
    y = (x @ torch.linspace(-1, 1, 8)).unsqueeze(1) + 0.1 * torch.sin(3 * x[:, :1])

    @torch.compile
    def train_step(x, y):
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        return loss

    loop.run(train_step, x, y, args)

if __name__ == "__main__":
    main()
