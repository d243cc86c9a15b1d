"""The decoders of the distributed benchmark (bench/distributed/run.py): a
GPT-2-small-sized one (learned positions, LayerNorm, GELU MLP) and a
Llama-style one 1024 wide (RMSNorm, rotary positions, SwiGLU MLP), both with
attention written out (causal mask, softmax; dynoc's CUDA target has no SDPA
backward yet) and untied embeddings. Each also comes in a small size for
the CPU table (2 gloo processes on a 2-core machine)."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CONFIGS = {
    # name: (family, vocab, width, heads, layers, mlp width, batch, sequence)
    "gpt2-small": ("gpt", 50304, 768, 12, 12, 3072, 4, 256),
    "llama-1024": ("llama", 32000, 1024, 16, 8, 2816, 4, 256),
    "gpt2-mini": ("gpt", 4096, 256, 4, 4, 1024, 4, 128),
    "llama-mini": ("llama", 4096, 256, 4, 4, 704, 4, 128),
}


class Attention(nn.Module):
    def __init__(self, d, heads, context, rotary):
        super().__init__()
        self.heads = heads
        self.qkv, self.proj = nn.Linear(d, 3 * d, bias=not rotary), nn.Linear(d, d, bias=not rotary)
        self.register_buffer("causal", torch.triu(torch.ones(context, context, dtype=torch.bool), 1),
                             persistent=False)
        self.rotary = rotary
        if rotary:
            half = d // heads // 2
            freq = 1.0 / (10000 ** (torch.arange(half, dtype=torch.float32) / half))
            angle = torch.outer(torch.arange(context, dtype=torch.float32), freq)
            self.register_buffer("cos", angle.cos(), persistent=False)
            self.register_buffer("sin", angle.sin(), persistent=False)

    def rotate(self, z):
        half = z.shape[-1] // 2
        a, b = z[..., :half], z[..., half:]
        cos, sin = self.cos[:z.shape[2]], self.sin[:z.shape[2]]
        return torch.cat([a * cos - b * sin, a * sin + b * cos], dim=-1)

    def forward(self, h):
        b, t, d = h.shape
        q, k, v = self.qkv(h).split(d, dim=-1)
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        if self.rotary:
            q, k = self.rotate(q), self.rotate(k)
        scores = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(d // self.heads))
        scores = scores.masked_fill(self.causal[:t, :t], float("-inf"))
        y = torch.softmax(scores, dim=-1) @ v
        return self.proj(y.transpose(1, 2).reshape(b, t, d))


class RMSNorm(nn.Module):
    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.weight, self.eps = nn.Parameter(torch.ones(d)), eps

    def forward(self, h):
        return h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


class Block(nn.Module):
    def __init__(self, family, d, heads, mlp, context):
        super().__init__()
        llama = family == "llama"
        norm = (lambda: RMSNorm(d)) if llama else (lambda: nn.LayerNorm(d))
        self.ln1, self.ln2 = norm(), norm()
        self.attn = Attention(d, heads, context, rotary=llama)
        self.llama = llama
        if llama:
            self.gate, self.up = nn.Linear(d, mlp, bias=False), nn.Linear(d, mlp, bias=False)
            self.down = nn.Linear(mlp, d, bias=False)
        else:
            self.fc, self.out = nn.Linear(d, mlp), nn.Linear(mlp, d)

    def forward(self, h):
        h = h + self.attn(self.ln1(h))
        z = self.ln2(h)
        if self.llama:
            return h + self.down(F.silu(self.gate(z)) * self.up(z))
        return h + self.out(F.gelu(self.fc(z), approximate="tanh"))


class Decoder(nn.Module):
    def __init__(self, family, vocab, d, heads, layers, mlp, context):
        super().__init__()
        self.tokens = nn.Embedding(vocab, d)
        self.positions = nn.Embedding(context, d) if family == "gpt" else None
        self.blocks = nn.ModuleList(Block(family, d, heads, mlp, context) for _ in range(layers))
        self.ln = RMSNorm(d) if family == "llama" else nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)

    def forward(self, ids):
        h = self.tokens(ids)
        if self.positions is not None:
            h = h + self.positions(torch.arange(ids.shape[1], device=ids.device))
        for block in self.blocks:
            h = block(h)
        return self.head(self.ln(h))


def make(name):
    """The model `name`, its parameters drawn from torch's seed 0."""
    family, vocab, d, heads, layers, mlp, _, context = CONFIGS[name]
    torch.manual_seed(0)
    return Decoder(family, vocab, d, heads, layers, mlp, context)


def batch(name, rank):
    """Rank `rank`'s fixed batch of token ids and next tokens (on the CPU)."""
    _, vocab, *_, b, t = CONFIGS[name]
    g = torch.Generator().manual_seed(1000 + rank)
    ids = torch.randint(0, vocab, (b, t + 1), generator=g)
    return ids[:, :-1].contiguous(), ids[:, 1:].contiguous()


def optimizer(params):
    """SGD with momentum (its state: one buffer per parameter, so that the
    4-rank captures fit this machine's memory)."""
    return torch.optim.SGD(params, lr=1e-3, momentum=0.9)


def loss_of(model, x, y, device_type):
    """The step's loss: the forward under bf16 autocast, cross-entropy in f32."""
    with torch.autocast(device_type, dtype=torch.bfloat16):
        logits = model(x)
    return F.cross_entropy(logits.float().view(-1, logits.shape[-1]), y.view(-1))
