# A wrapper that uses one output of a submodule and ignores another (BERT's
# pooler under a classification head): the ignored output's ops and their
# weights leave the graph, and the symbolic replay that makes the graph
# dynamic still replays them as recorded (it failed with a KeyError on the
# dropped weight, and the wrapper stayed static).
# expect graphs: 1
# expect breaks: 0
# expect recompiles: 1
# expect stderr: are dynamic now
# env: DYNOC_LOGS=recompiles
# dynamo: breaks<=
import torch
import torch.nn as nn


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(40, 8)
        self.pool = nn.Linear(8, 8)

    def forward(self, ids, mask):
        h = self.embed(ids) * mask.unsqueeze(-1)
        return h, torch.tanh(self.pool(h[:, 0]))


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = Encoder()
        self.head = nn.Linear(8, 3)

    def forward(self, input_ids, attention_mask):
        hidden, _pooled = self.encoder(input_ids, attention_mask)
        return self.head(hidden.mean(1))


torch.manual_seed(0)
model = torch.compile(Classifier())
with torch.no_grad():
    for t in (6, 10, 13):
        ids = torch.randint(0, 40, (2, t))
        print(tuple(model(input_ids=ids, attention_mask=torch.ones(2, t)).shape))
