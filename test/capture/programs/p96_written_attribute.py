# The region sets an attribute of a global object and then reads it: the read
# sees the region's own value, so it is not guarded (a guard on it would fail
# on every later call, after the program resets it). One graph, reused.
# expect graphs: 1
# expect breaks: 0
# expect recompiles: 0
# dynamo: same
import torch


class State:
    def __init__(self):
        self.mode = 0


state = State()


@torch.compile
def f(x):
    state.mode = 1
    if state.mode == 1:
        return x + 1
    return x - 1


for _ in range(3):
    print(f(torch.ones(2)).tolist(), state.mode)
    state.mode = 0
