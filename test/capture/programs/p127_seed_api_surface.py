# The rest of the torch.compile surface under capture: list_backends() lists
# what dynoc accepts; an unknown mode raises torch.compile's RuntimeError;
# the recompile limit
# is the installed torch's (8 in torch 2.13), then calls run eagerly;
# TORCH_LOGS turns on dynoc's counterparts of Dynamo's logs.
# expect graphs: 8
# expect breaks: 0
# expect recompiles: 7
# expect stderr: [dynoc:recompiles] recompiling
# env: TORCH_LOGS=recompiles
import warnings

import torch
import torch._dynamo

print("inductor" in torch._dynamo.list_backends())
try:
    torch.compile(lambda x: x, mode="fastest")
except RuntimeError as e:
    print("RuntimeError", str(e).split(",")[0])


@torch.compile(dynamic=False)
def f(x):
    return x.sum() + 1


with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    print([f(torch.ones(n)).item() for n in range(2, 12)])
