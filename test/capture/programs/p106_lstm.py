# nn.LSTM records one mkldnn_rnn_layer per layer, nn.LSTMCell unsafe_split:
# both stay in the graph (Dynamo breaks at nn.LSTM unless allow_rnn is set).
# expect graphs: 2
# expect breaks: 0
# expect ops: aten.mkldnn_rnn_layer aten.unsafe_split.Tensor
# dynamo: breaks<=
import torch
import torch.nn as nn

torch.manual_seed(0)
lstm = nn.LSTM(8, 16, batch_first=True, num_layers=2)
cell = nn.LSTMCell(8, 16)


@torch.compile
def f(x):
    out, (h, c) = lstm(x)
    return out.sum(dim=1) + h[-1] + c[0]


@torch.compile
def g(x, h, c):
    for t in range(x.size(1)):
        h, c = cell(x[:, t], (h, c))
    return h


with torch.no_grad():
    x = torch.randn(3, 5, 8)
    print(round(f(x).sum().item(), 4))
    print(round(g(x, torch.zeros(3, 16), torch.zeros(3, 16)).sum().item(), 4))
