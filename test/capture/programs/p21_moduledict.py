# A ModuleDict indexed by a string argument: guarded on the string.
# expect graphs: 1
# expect breaks: 0
# expect guard: L['kind'] == 'b'
import torch

class Heads(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.heads = torch.nn.ModuleDict({"a": torch.nn.Linear(3, 1), "b": torch.nn.Linear(3, 2)})

    def forward(self, x, kind):
        return self.heads[kind](x)

torch.manual_seed(0)
m = Heads()
x = torch.randn(2, 3)
print(torch.allclose(torch.compile(m)(x, "b"), m(x, "b")))
