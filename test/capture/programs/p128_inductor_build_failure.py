# With --backend=inductor, a graph that dynoc cannot build (an op the CPU
# backend lacks) is a warning naming the op and its place; the script's exit
# code is its own.
# expect graphs: 1
# expect breaks: 0
# expect stderr: op 'aten.cummax' is not supported
# expect stderr: was not built
# expect unbuilt: graph_0
# capture-args: --backend=inductor
import torch


@torch.compile
def f(x):
    return torch.cummax(x, 0)[0] * 2


print(f(torch.tensor([1.0, 3.0, 2.0])).tolist())
