# A class defined inside the region (its body runs in dynoc's evaluator, as
# module code does) and a generator consumed by sum(): both are followed, so
# the region is one graph with no break (Dynamo breaks at __build_class__).
# expect graphs: 1
# expect breaks: 0
# expect ops: aten.mul.Tensor aten.add.Tensor
# dynamo: breaks<=
import torch

@torch.compile
def f(x):
    class Box:
        scale = 2
        def get(self, t):
            return t * self.scale
    def gen(t):
        for i in range(3):
            yield t + i
    s = sum(gen(x))
    return Box().get(x) + s

print(f(torch.ones(2)).tolist())
