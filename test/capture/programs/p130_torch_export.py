# torch.export.export inside a captured script runs torch's own export (its
# fake-tensor tracing is not recorded as the program's graph); the script's
# torch.compile region is captured as usual.
# expect graphs: 1
# expect breaks: 0
# expect ops: aten.relu
import torch


class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 2)

    def forward(self, x):
        return torch.relu(self.fc(x))


torch.manual_seed(0)
m = M()
ep = torch.export.export(m, (torch.randn(3, 4),))
x = torch.randn(3, 4)
print(type(ep).__name__, torch.allclose(ep.module()(x), m(x)))
with torch.no_grad():
    print(torch.compile(m)(x).shape)
