# A bound method compiled as the region.
# expect graphs: 1
# expect breaks: 0
import torch

class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.ones(3))

    def score(self, x):
        return (x * self.w).sum(-1)

m = Model()
print(torch.compile(m.score)(torch.ones(2, 3)).tolist())
