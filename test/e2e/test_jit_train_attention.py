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


@pytest.fixture
def dynoc_cli(dynoc):
    """conftest's `dynoc` (the CLI), beside the package of that name."""
    return dynoc


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


def _attention_backward_mlir(l, s, causal, mask_type, scale):
    """One attention backward op (batch 2, 3 heads, head dim 4) as a graph file."""
    t = lambda *d: "tensor<" + "x".join(map(str, d)) + "xf32>"  # noqa: E731
    q, kv, lse = t(2, 3, l, 4), t(2, 3, s, 4), t(2, 3, l)
    args = [("g", q), ("q", q), ("k", kv), ("v", kv), ("o", q), ("lse", lse)]
    if mask_type:
        args.append(("mask", f"tensor<1x1x{l}x{s}x{mask_type}>"))
    sig = ", ".join(f"%{n}: {ty}" for n, ty in args)
    inputs = ", ".join(f'{{kind = "user", name = "L[\'{n}\']"}}' for n, _ in args)
    attrs = f"dropout_p = 0.0 : f64, is_causal = {str(causal).lower()}" + \
        (f", scale = {scale} : f64" if scale else "") + \
        f", operand_segment_sizes = array<i32: 1, 1, 1, 1, 1, 1, {int(bool(mask_type))}>"
    return (f"func.func @attention_backward({sig}) -> ({q}, {kv}, {kv}) attributes "
            f"{{dynoc.inputs = [{inputs}]}} {{\n"
            f'  %0:3 = "aten._scaled_dot_product_flash_attention_for_cpu_backward"('
            f"{', '.join('%' + n for n, _ in args)}) {{{attrs}}} : "
            f"({', '.join(ty for _, ty in args)}) -> ({q}, {kv}, {kv})\n"
            f"  return %0#0, %0#1, %0#2 : {q}, {kv}, {kv}\n}}\n")


@pytest.mark.parametrize("l,s,causal,mask_type,scale", [
    (5, 6, True, None, None), (4, 4, False, "i1", 0.3), (3, 5, False, "f32", None),
    (6, 6, True, "f32", None)])
def test_attention_backward_decomposition_gives_autograds_gradients(dynoc_cli, tmp_path, l, s,
                                                                     causal, mask_type, scale):
    """The CUDA target's attention backward (dynoc-decompose's
    attention-backward: probabilities recomputed from the scores, then GEMMs)
    checked here on the CPU target: the decomposed graph built and run gives
    torch autograd's gradients of F.scaled_dot_product_attention."""
    src = tmp_path / "attention_backward.mlir"
    src.write_text(_attention_backward_mlir(l, s, causal, mask_type, scale))
    p = dynoc_cli("opt", src, "--pass=dynoc-decompose{attention-backward=true}", check=True)
    assert "flash_attention_for_cpu_backward" not in p.stdout
    (tmp_path / "decomposed.mlir").write_text(p.stdout)
    dynoc_cli("build", tmp_path / "decomposed.mlir", "-o", tmp_path / "ab.so", check=True)
    torch.manual_seed(0)
    q = torch.randn(2, 3, l, 4, requires_grad=True)
    k = torch.randn(2, 3, s, 4, requires_grad=True)
    v = torch.randn(2, 3, s, 4, requires_grad=True)
    mask = None
    if mask_type == "i1":
        mask = torch.rand(1, 1, l, s) > 0.3
        mask[..., 0] = True  # no row without a key
    elif mask_type == "f32":
        mask = torch.randn(1, 1, l, s)
    o = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=causal, scale=scale)
    g = torch.randn_like(o)
    o.backward(g)
    extra = (mask,) if mask is not None else ()
    got = dynoc.load(tmp_path / "ab.so")(g, q.detach(), k.detach(), v.detach(), o.detach(),
                                         torch.zeros(2, 3, l), *extra)
    for a, want in zip(got, (q.grad, k.grad, v.grad)):
        torch.testing.assert_close(a, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("causal,masked", [(True, False), (False, True)])
def test_f32_attention_decomposition_gives_sdpas_result(dynoc_cli, tmp_path, causal, masked):
    """The CUDA target's f32 attention (dynoc-decompose's attention-f32:
    softmax(Q K^T * scale) V as two batched GEMMs) checked on the CPU target
    against F.scaled_dot_product_attention."""
    q_t, kv_t = "tensor<2x3x5x4xf32>", "tensor<2x3x6x4xf32>"
    args = [("q", q_t), ("k", kv_t), ("v", kv_t)] + ([("mask", "tensor<1x1x5x6xf32>")]
                                                     if masked else [])
    sig = ", ".join(f"%{n}: {ty}" for n, ty in args)
    inputs = ", ".join(f'{{kind = "user", name = "L[\'{n}\']"}}' for n, _ in args)
    src = tmp_path / "attention.mlir"
    src.write_text(
        f"func.func @attention({sig}) -> {q_t} attributes {{dynoc.inputs = [{inputs}]}} {{\n"
        f'  %0:2 = "aten._scaled_dot_product_flash_attention_for_cpu"('
        f"{', '.join('%' + n for n, _ in args)}) {{is_causal = {str(causal).lower()}, "
        f"operand_segment_sizes = array<i32: 1, 1, 1, {int(masked)}>}} : "
        f"({', '.join(ty for _, ty in args)}) -> ({q_t}, tensor<2x3x5xf32>)\n"
        f"  return %0#0 : {q_t}\n}}\n")
    p = dynoc_cli("opt", src, "--pass=dynoc-decompose{attention-f32=true}", check=True)
    assert "flash_attention_for_cpu" not in p.stdout
    (tmp_path / "decomposed.mlir").write_text(p.stdout)
    dynoc_cli("build", tmp_path / "decomposed.mlir", "-o", tmp_path / "a.so", check=True)
    torch.manual_seed(0)
    q, k, v = torch.randn(2, 3, 5, 4), torch.randn(2, 3, 6, 4), torch.randn(2, 3, 6, 4)
    mask = (torch.randn(1, 1, 5, 6),) if masked else ()
    want = F.scaled_dot_product_attention(q, k, v, *mask, is_causal=causal)
    torch.testing.assert_close(dynoc.load(tmp_path / "a.so")(q, k, v, *mask), want,
                               rtol=1e-5, atol=1e-6)
