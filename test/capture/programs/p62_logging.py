# A logging call inside the region is a side effect: a break.
# expect graphs: 2
# expect breaks: 1
# expect break: a side effect outside the graph
import logging
import torch

log = logging.getLogger("corpus")

@torch.compile
def f(x):
    y = x + 1
    log.warning("step")
    return y * 2

print(f(torch.ones(1)).tolist())
