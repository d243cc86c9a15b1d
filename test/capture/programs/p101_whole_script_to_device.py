# A whole script (no torch.compile) that moves its model with .to(device) and
# .double() at module level: nn.Module._apply defines an annotated nested
# function, which the evaluator must build as CPython does (annotations as a
# tuple; a SystemError "non-dict annotations" before the fix).
# expect exit: 0
# expect ops: aten.addmm aten.relu
# dynamo: stdout
import torch
import torch.nn as nn

device = torch.device("cpu")
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
model = model.to(device)
model = model.double()


def scale(a: torch.Tensor, k: int = 2) -> torch.Tensor:
    return a * k


x = torch.randn(3, 8, dtype=torch.float64, device=device)
with torch.no_grad():
    y = scale(model(x))
print(y.dtype, tuple(y.shape), scale.__annotations__["k"].__name__)
