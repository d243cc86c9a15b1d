# Token ids and their attention mask change length together (as every
# BERT/GPT-2 call with a mask does): two dynamic input dims with the same sizes
# in both runs. A position table sliced by `ids.size(1) + past` (BERT's
# embeddings) is told apart by where Python read the size, so the second length
# makes the one graph dynamic instead of a second static one; the third length
# reuses it.
# expect graphs: 1
# expect breaks: 0
# expect recompiles: 1
# expect ops: aten.slice.Tensor aten.mul.Tensor
# dynamo: breaks<=
import torch
import torch.nn as nn


class Embed(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = nn.Embedding(50, 8)
        self.register_buffer("position_ids", torch.arange(32).unsqueeze(0))
        self.pos = nn.Embedding(32, 8)

    def forward(self, input_ids, attention_mask):
        past = 0
        seq_length = input_ids.size()[1]
        position_ids = self.position_ids[:, past:seq_length + past]
        h = self.tok(input_ids) + self.pos(position_ids)
        return h * attention_mask.unsqueeze(-1)


torch.manual_seed(0)
model = torch.compile(Embed())
with torch.no_grad():
    for t in (5, 9, 12):
        ids = torch.randint(0, 50, (2, t))
        mask = torch.ones(2, t)
        print(tuple(model(ids, mask).shape))
