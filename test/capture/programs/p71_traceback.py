# An exception inside a region: the traceback names the region's frames as
# python's would, the exit code passes through, earlier graphs are kept.
# expect graphs: 1
# expect recompiles: 1
# expect exit: 1
# expect stderr: line 12, in helper
# expect stderr: ZeroDivisionError: division by zero
import torch

def helper(x, d):
    y = x * 2
    return y + 1 / d

@torch.compile
def f(x, d):
    return helper(x, d)

print(f(torch.ones(1), 1))
f(torch.ones(1), 0)
