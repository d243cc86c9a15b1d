# No torch.compile anywhere: the whole script is one region (Dynamo has no
# such mode: no comparison). Printing and .item() break it.
# expect graphs: 2
# expect breaks: 2
# expect ops: aten.mm aten.relu aten.mul.Tensor
# expect break: item()
# dynamo: skip
import torch

w = torch.full((3, 3), 0.5)
x = torch.ones(2, 3)
y = torch.relu(x @ w) + 1
total = y.sum()
print(total.item())
for _ in range(2):
    y = y * 2
