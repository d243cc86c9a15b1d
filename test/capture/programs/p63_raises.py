# The script raises after a region ran: traceback and exit code pass through,
# the graph captured so far is kept.
# expect graphs: 1
# expect exit: 1
# expect stderr: ValueError: done on purpose
import torch

@torch.compile
def f(x):
    return x + 1

print(f(torch.ones(1)).tolist())
raise ValueError("done on purpose")
