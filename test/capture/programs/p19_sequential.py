# nn.Sequential: its forward iterates the children.
# expect graphs: 1
# expect breaks: 0
# expect input: parameter 0.weight
import torch

torch.manual_seed(0)
m = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
x = torch.randn(5, 4)
print(torch.allclose(torch.compile(m)(x), m(x)))
