# In-place ops on intermediates are recorded functionally (add_ -> add).
# expect graphs: 1
# expect breaks: 0
# expect ops: aten.add.Tensor aten.relu
import torch

@torch.compile
def f(x):
    y = x * 2
    y.add_(x)
    y.relu_()
    return y

print(f(torch.tensor([-1.0, 1.0])).tolist())
