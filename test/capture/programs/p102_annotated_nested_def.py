# An annotated function defined inside a region, in followed code (as
# transformers' attention-mask helpers do): its annotations read back as a
# dict, and the region captures its ops.
# expect graphs: 1
# expect breaks: 0
# expect ops: aten.mul.Tensor aten.tanh
import torch


@torch.compile
def f(x, mask):
    def apply_mask(t: torch.Tensor, m: torch.Tensor, *, fill: float = 0.0) -> torch.Tensor:
        return t * m + fill

    return torch.tanh(apply_mask(x, mask))


x = torch.ones(2, 3)
print(f(x, torch.tensor([1.0, 0.0, 1.0])).sum().item())
