# A ModuleList loop in forward.
# expect graphs: 1
# expect breaks: 0
import torch

class Stack(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = torch.nn.ModuleList(torch.nn.Linear(4, 4) for _ in range(3))

    def forward(self, x):
        for layer in self.layers:
            x = torch.tanh(layer(x))
        return x

torch.manual_seed(0)
m = Stack()
x = torch.randn(2, 4)
print(torch.allclose(torch.compile(m)(x), m(x)))
