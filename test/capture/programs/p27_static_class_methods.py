# staticmethod and classmethod helpers.
# expect graphs: 1
# expect breaks: 0
import torch

class Ops:
    factor = 3.0

    @staticmethod
    def double(x):
        return x * 2

    @classmethod
    def triple(cls, x):
        return x * cls.factor

@torch.compile
def f(x):
    return Ops.double(x) + Ops.triple(x)

print(f(torch.ones(2)).tolist())
