"""Training through scaled dot-product attention in process (issue 47, "no
split backward"): the attention op's backward
(`_scaled_dot_product_flash_attention_for_cpu_backward`) is an op of the
dialect that the CPU target builds, so a transformer's step runs one built
forward and one built backward graph (it ran eagerly: "1 forward and 2
backward graphs"), with losses and parameters equal to eager's."""
import pytest
import torch
import torch.nn.functional as F

import dynoc
from dynoc.jit import training as _training


@pytest.fixture(autouse=True)
def _fresh_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("DYNOC_CACHE_DIR", str(tmp_path / "cache"))
    dynoc.reset()


class SelfAttention(torch.nn.Module):
    """Attention as model code writes it: one projection split into heads,
    SDPA, the heads joined and projected."""

    def __init__(self, kind, width=32, heads=4, kv_heads=4):
        super().__init__()
        self.kind, self.heads, self.kv_heads = kind, heads, kv_heads
        self.dim = width // heads
        self.q = torch.nn.Linear(width, width)
        self.kv = torch.nn.Linear(width, 2 * kv_heads * self.dim)
        self.o = torch.nn.Linear(width, width)

    def forward(self, x, mask=None):
        b, t, _ = x.shape
        q = self.q(x).view(b, t, self.heads, self.dim).transpose(1, 2)
        k, v = self.kv(x).view(b, t, 2, self.kv_heads, self.dim).permute(2, 0, 3, 1, 4)
        if self.kind == "causal":
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        elif self.kind == "mask":
            y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        else:  # grouped-query heads, as transformers' repeat_kv writes it
            rep = self.heads // self.kv_heads
            k, v = (z[:, :, None].expand(b, self.kv_heads, rep, t, self.dim)
                    .reshape(b, self.heads, t, self.dim) for z in (k, v))
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.o(y.transpose(1, 2).reshape(b, t, -1))


@pytest.mark.parametrize("kind", ["causal", "mask", "gqa"])
def test_an_attention_training_step_runs_built_forward_and_backward(kind):
    torch.manual_seed(0)
    kv_heads = 2 if kind == "gqa" else 4
    m, ref = SelfAttention(kind, kv_heads=kv_heads), SelfAttention(kind, kv_heads=kv_heads)
    ref.load_state_dict(m.state_dict())
    cm = dynoc.compile(m)
    # SGD: the key bias's gradient is zero up to rounding (softmax ignores a
    # shift of every key), which Adam's normalization would turn into steps.
    opt = torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
    opt_ref = torch.optim.SGD(ref.parameters(), lr=0.1, momentum=0.9)
    # An additive padding mask broadcast over heads and query rows.
    mask = torch.zeros(2, 1, 1, 12)
    mask[1, ..., 9:] = float("-inf")
    for step in range(5):
        x = torch.randn(2, 12, 32)
        loss = cm(x, mask).square().mean()
        loss_ref = ref(x, mask).square().mean()
        torch.testing.assert_close(loss, loss_ref, rtol=1e-5, atol=1e-6, msg=f"step {step}")
        for o, l in ((opt, loss), (opt_ref, loss_ref)):
            o.zero_grad()
            l.backward()
            o.step()
    for (name, p), q in zip(m.named_parameters(), ref.parameters()):
        torch.testing.assert_close(p, q, rtol=1e-5, atol=1e-5, msg=name)
    assert cm._dynoc_region.compiled_calls() == 4
    assert isinstance(cm._dynoc_region.compiled[0], _training.TrainingGraph)


def test_a_transformers_llama_trains_compiled_with_eager_losses():
    """transformers' Llama (SDPA attention, grouped-query heads, causal mask
    from its mask functions) under dynoc.compile, trained by AdamW: built
    forward and backward on every step after the first."""
    transformers = pytest.importorskip("transformers")
    cfg = transformers.LlamaConfig(vocab_size=128, hidden_size=64, intermediate_size=128,
                                   num_hidden_layers=2, num_attention_heads=4,
                                   num_key_value_heads=2, max_position_embeddings=64)
    torch.manual_seed(0)
    m = transformers.LlamaForCausalLM(cfg).train()
    ref = transformers.LlamaForCausalLM(cfg).train()
    ref.load_state_dict(m.state_dict())
    cm = dynoc.compile(m)
    opt = torch.optim.AdamW(m.parameters(), lr=1e-3)
    opt_ref = torch.optim.AdamW(ref.parameters(), lr=1e-3)
    eager_before = dynoc.counters["eager_variants"]
    calls_before = dynoc.counters["compiled_calls"]
    ids = torch.randint(0, 128, (2, 16))
    for step in range(4):
        loss = cm(ids, labels=ids, use_cache=False).loss
        loss_ref = ref(ids, labels=ids, use_cache=False).loss
        torch.testing.assert_close(loss, loss_ref, rtol=1e-5, atol=1e-5, msg=f"step {step}")
        for o, l in ((opt, loss), (opt_ref, loss_ref)):
            o.zero_grad()
            l.backward()
            o.step()
    assert dynoc.counters["eager_variants"] == eager_before
    assert dynoc.counters["compiled_calls"] - calls_before == 3
