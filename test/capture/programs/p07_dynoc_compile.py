# dynoc.compile directly (a dynoc-only entry point: no Dynamo comparison).
# expect graphs: 1
# expect breaks: 0
# expect ops: aten.exp
# dynamo: skip
import torch
import dynoc

f = dynoc.compile(lambda x: torch.exp(x) - 1)
print(f(torch.zeros(3)).tolist())
