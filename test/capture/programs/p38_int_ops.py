# Integer tensors: argmax and indexing.
# expect graphs: 1
# expect breaks: 0
# expect ops: aten.argmax aten.index.Tensor
import torch

@torch.compile
def f(x, idx):
    return x[idx].argmax(-1)

x = torch.tensor([[1.0, 5.0], [7.0, 2.0], [0.0, 3.0]])
print(f(x, torch.tensor([2, 0])).tolist())
