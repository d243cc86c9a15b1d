# A region with breaks called again: in process each break is resumed after
# (the graph before it built, the call natively, the rest a resume function),
# so later calls run built code; printed output and results are eager's.
# expect graphs: 4
# expect breaks: 3
# expect break: print
# expect break: Tensor.item()
# expect break: a tensor's value decides Python control flow
# dynamo: graphs  (its graph_break counter does not count the jump)
import torch


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(4, 4)
        self.b = torch.nn.Linear(4, 2)

    def forward(self, x):
        h = torch.tanh(self.a(x))
        print("hidden", tuple(h.shape))
        if h.sum() > -100:
            h = h * 2
        else:
            h = h - 2
        scale = self.b.weight.abs().mean().item()  # the same at every call
        return self.b(h) * scale


torch.manual_seed(0)
net = Net().eval()
model = torch.compile(net)
with torch.no_grad():
    for step in range(4):
        x = torch.randn(3, 4)
        print(step, [round(v, 4) for v in model(x).flatten().tolist()])
