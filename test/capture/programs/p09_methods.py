# Methods of the module calling each other are followed.
# expect graphs: 1
# expect breaks: 0
# expect ops: aten.gelu
import torch

class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(6, 6)

    def act(self, x):
        return torch.nn.functional.gelu(x)

    def forward(self, x):
        return self.act(self.lin(x)) + x

torch.manual_seed(0)
m = Block()
x = torch.randn(3, 6)
print(torch.allclose(torch.compile(m)(x), m(x)))
