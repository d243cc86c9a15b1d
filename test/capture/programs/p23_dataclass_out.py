# A dataclass result (ModelOutput-style): its structure is recorded.
# expect graphs: 1
# expect breaks: 0
import dataclasses
import torch

@dataclasses.dataclass
class Out:
    logits: torch.Tensor
    hidden: torch.Tensor

@torch.compile
def f(x):
    h = x * 2
    return Out(logits=h.sum(-1), hidden=h)

o = f(torch.ones(2, 3))
print(type(o).__name__, o.logits.tolist(), o.hidden.shape)
