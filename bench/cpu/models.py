"""The model suite of the CPU benchmark: deterministic weights (seeded), eval mode.

make(name, batch) -> (module, example input). BERT and GPT-2 are built by
transformers from small configs with random weights (nothing is downloaded).
"""
import math

import torch
import torch.nn as nn


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2, self.fc3 = nn.Linear(256, 512), nn.Linear(512, 512), nn.Linear(512, 10)

    def forward(self, x):
        return self.fc3(torch.relu(self.fc2(torch.relu(self.fc1(x)))))


class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1, self.bn1 = nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16)
        self.conv2, self.bn2 = nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32)
        self.pool = nn.MaxPool2d(2)
        self.fc = nn.Linear(32 * 8 * 8, 10)

    def forward(self, x):
        x = self.pool(torch.relu(self.bn1(self.conv1(x))))
        x = self.pool(torch.relu(self.bn2(self.conv2(x))))
        return self.fc(torch.flatten(x, 1))


class ResNeXtBlock(nn.Module):
    """A ResNeXt bottleneck (ResNeXt-101 32x4d's second stage): 1x1, grouped
    3x3 with 32 groups, 1x1, batch norms and the residual."""

    def __init__(self, c=256, width=128, groups=32):
        super().__init__()
        self.conv1, self.bn1 = nn.Conv2d(c, width, 1, bias=False), nn.BatchNorm2d(width)
        self.conv2 = nn.Conv2d(width, width, 3, padding=1, groups=groups, bias=False)
        self.bn2 = nn.BatchNorm2d(width)
        self.conv3, self.bn3 = nn.Conv2d(width, c, 1, bias=False), nn.BatchNorm2d(c)

    def forward(self, x):
        y = torch.relu(self.bn1(self.conv1(x)))
        y = torch.relu(self.bn2(self.conv2(y)))
        return torch.relu(x + self.bn3(self.conv3(y)))


class InvertedResidual(nn.Module):
    """A MobileNetV2 block: 1x1 expansion, depthwise 3x3 (groups = channels),
    1x1 projection, ReLU6 and the residual."""

    def __init__(self, c=32, expand=6):
        super().__init__()
        h = c * expand
        self.expand, self.bn1 = nn.Conv2d(c, h, 1, bias=False), nn.BatchNorm2d(h)
        self.dw = nn.Conv2d(h, h, 3, padding=1, groups=h, bias=False)
        self.bn2 = nn.BatchNorm2d(h)
        self.project, self.bn3 = nn.Conv2d(h, c, 1, bias=False), nn.BatchNorm2d(c)

    def forward(self, x):
        y = nn.functional.relu6(self.bn1(self.expand(x)))
        y = nn.functional.relu6(self.bn2(self.dw(y)))
        return x + self.bn3(self.project(y))


class EncoderBlock(nn.Module):
    """A pre-norm transformer encoder block (attention + GELU MLP)."""

    def __init__(self, d=128, heads=4):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.ff1, self.ff2 = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def forward(self, x):
        b, t, d = x.shape
        h = self.heads
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=-1)
        q = q.view(b, t, h, d // h).transpose(1, 2)
        k = k.view(b, t, h, d // h).transpose(1, 2)
        v = v.view(b, t, h, d // h).transpose(1, 2)
        att = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(d // h), dim=-1)
        y = (att @ v).transpose(1, 2).reshape(b, t, d)
        x = x + self.proj(y)
        return x + self.ff2(torch.nn.functional.gelu(self.ff1(self.ln2(x))))


class LastHiddenState(nn.Module):
    """A transformers model's last hidden state: GPT-2's output also carries its
    key/value cache object, which is not a tensor."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, ids):
        return self.model(ids).last_hidden_state


# The example input of each model, by batch size.
INPUTS = {
    "mlp": lambda b: torch.randn(b, 256),
    "cnn": lambda b: torch.randn(b, 3, 32, 32),
    "resnext_block": lambda b: torch.randn(b, 256, 28, 28),
    "mobilenet_block": lambda b: torch.randn(b, 32, 56, 56),
    "encoder_block": lambda b: torch.randn(b, 32, 128),
    "bert": lambda b: torch.randint(0, 1000, (b, 32)),
    "gpt2": lambda b: torch.randint(0, 1000, (b, 32)),
}


# Inputs of the sequence models at a batch size and a sequence length.
INPUTS_BY_LENGTH = {
    "encoder_block": lambda b, t: torch.randn(b, t, 128),
    "bert": lambda b, t: torch.randint(0, 1000, (b, t)),
    "gpt2": lambda b, t: torch.randint(0, 1000, (b, t)),
}


def example_input(name, batch):
    """An input for model `name` without building the model (what a process
    serving a built model has)."""
    if name not in INPUTS:
        raise ValueError(f"unknown model '{name}'")
    return INPUTS[name](batch)


def make(name, batch):
    torch.manual_seed(0)
    if name == "mlp":
        m = MLP()
    elif name == "cnn":
        m = CNN()
        for bn in (m.bn1, m.bn2):  # non-trivial running statistics
            bn.running_mean.uniform_(-0.5, 0.5)
            bn.running_var.uniform_(0.5, 2.0)
    elif name in ("resnext_block", "mobilenet_block"):
        m = ResNeXtBlock() if name == "resnext_block" else InvertedResidual()
        for bn in m.modules():
            if isinstance(bn, nn.BatchNorm2d):  # non-trivial running statistics
                bn.running_mean.uniform_(-0.5, 0.5)
                bn.running_var.uniform_(0.5, 2.0)
    elif name == "encoder_block":
        m = EncoderBlock()
    elif name == "bert":
        from transformers import BertConfig, BertModel
        cfg = BertConfig(num_hidden_layers=2, num_attention_heads=4, hidden_size=128,
                         intermediate_size=512, vocab_size=1000, max_position_embeddings=64)
        m = BertModel(cfg)
    elif name == "gpt2":
        from transformers import GPT2Config, GPT2Model
        cfg = GPT2Config(n_layer=2, n_head=4, n_embd=128, vocab_size=1000, n_positions=64,
                         bos_token_id=0, eos_token_id=0)
        m = LastHiddenState(GPT2Model(cfg))
    else:
        raise ValueError(f"unknown model '{name}'")
    return m.eval(), example_input(name, batch)


def main_output(out):
    """The tensor to compare: the output itself, or a ModelOutput's last hidden state."""
    if isinstance(out, torch.Tensor):
        return out
    if hasattr(out, "last_hidden_state"):
        return out.last_hidden_state
    return out["last_hidden_state"]


NAMES = ["mlp", "cnn", "encoder_block", "bert", "gpt2"]
# Grouped and depthwise convolutions (bench/README.md: measured on one thread).
GROUPED = ["resnext_block", "mobilenet_block"]
