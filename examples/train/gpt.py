"""Trains a tiny character-level GPT on examples/train/corpus.txt with AdamW.

    python3 examples/train/gpt.py --steps 23                # plain PyTorch
    dynoc capture examples/train/gpt.py -o out/gpt -- --save-data out/gpt/data
    dynoc build out/gpt/step_1.mlir -o out/gpt/gpt.so
    bazel-bin/examples/train/train out/gpt/gpt.so out/gpt/data/x.npy \\
        out/gpt/data/y.npy 20

Two transformer blocks (pre-layer-norm, causal self-attention written out,
a GELU MLP) over learned token and position embeddings, cross-entropy on the
next character. The batch is fixed (the same 16 windows of the corpus each
step), so the loss falls as the model learns them. Under `dynoc capture` the
compiled `train_step` records the forward graph, a backward graph (layer norm,
GELU, attention, embedding gradients) and the AdamW update, whose step count
and learning rate are tensor inputs (docs/training.md); the second step
recompiles once (the optimizer state appears) and is stitched into
`step_1.mlir`. The C++ loop continues from the captured state: its losses
are eager's losses of steps 4, 5, ... (`--steps 23 --losses-from 3`).
"""
import math
import os

import torch
import torch.nn as nn

import loop

CORPUS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus.txt")


class Block(nn.Module):
    def __init__(self, d, heads, context):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.fc, self.out = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)
        self.register_buffer("causal", torch.triu(torch.ones(context, context, dtype=torch.bool), 1))

    def attend(self, h):
        b, t, d = h.shape
        q, k, v = self.qkv(h).split(d, dim=-1)
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        scores = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(d // self.heads))
        scores = scores.masked_fill(self.causal[:t, :t], float("-inf"))
        y = torch.softmax(scores, dim=-1) @ v
        return self.proj(y.transpose(1, 2).reshape(b, t, d))

    def forward(self, h):
        h = h + self.attend(self.ln1(h))
        return h + self.out(nn.functional.gelu(self.fc(self.ln2(h)), approximate="tanh"))


class TinyGPT(nn.Module):
    def __init__(self, vocab, context=32, d=32, heads=2, layers=2):
        super().__init__()
        self.tokens, self.positions = nn.Embedding(vocab, d), nn.Embedding(context, d)
        self.blocks = nn.ModuleList(Block(d, heads, context) for _ in range(layers))
        self.ln, self.head = nn.LayerNorm(d), nn.Linear(d, vocab)

    def forward(self, ids):
        h = self.tokens(ids) + self.positions(torch.arange(ids.shape[1], device=ids.device))
        for block in self.blocks:
            h = block(h)
        return self.head(self.ln(h))


def batch(text, vocab, count=16, context=32):
    """`count` evenly spaced windows of the corpus and their next characters."""
    ids = torch.tensor([vocab.index(c) for c in text])
    starts = torch.linspace(0, len(ids) - context - 2, count).long()
    x = torch.stack([ids[s:s + context] for s in starts])
    y = torch.stack([ids[s + 1:s + context + 1] for s in starts])
    return x, y


def main():
    args = loop.arguments("a character-level GPT with AdamW")
    torch.manual_seed(0)
    with open(CORPUS) as f:
        text = f.read()
    vocab = sorted(set(text))
    x, y = batch(text, vocab)
    model = TinyGPT(len(vocab))
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)

    @torch.compile
    def train_step(x, y):
        opt.zero_grad()
        logits = model(x)
        loss = nn.functional.cross_entropy(logits.view(-1, logits.shape[-1]), y.view(-1))
        loss.backward()
        opt.step()
        return loss

    loop.run(train_step, x, y, args)

if __name__ == "__main__":
    main()
