# Module constructors and initializers under whole-script capture: the fills
# (uniform_, normal_, zero_, bernoulli_) are recorded as their functional twins,
# not graph breaks ("in-place op without a functional form" before).
# expect exit: 0
# expect ops: aten.uniform aten.normal_functional aten.zero
# dynamo: stdout
import torch
import torch.nn as nn

torch.manual_seed(0)
layer = nn.Linear(6, 3)
with torch.no_grad():
    nn.init.normal_(layer.weight, 0.0, 0.02)
    layer.bias.zero_()
    keep = torch.empty(4, 6).bernoulli_(0.5)
    y = layer(torch.ones(4, 6) * keep)
print(tuple(y.shape), float(layer.bias.abs().sum()))
