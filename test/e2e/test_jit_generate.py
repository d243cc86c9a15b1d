"""transformers' generate() as its documentation compiles it, in process on the
CPU: the model's forward compiled, greedy decoding, tokens equal to eager's,
and built code run on the decode steps (counters), not only matching output."""
import pytest
import torch

import dynoc

transformers = pytest.importorskip("transformers")


@pytest.fixture(autouse=True)
def _fresh_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("DYNOC_CACHE_DIR", str(tmp_path / "cache"))
    dynoc.reset()


def tiny_llama():
    torch.manual_seed(0)
    cfg = transformers.LlamaConfig(vocab_size=128, hidden_size=64, intermediate_size=128,
                                   num_hidden_layers=2, num_attention_heads=4,
                                   num_key_value_heads=2, max_position_embeddings=64)
    return transformers.LlamaForCausalLM(cfg).eval()


def test_static_cache_generate_runs_every_decode_step_compiled():
    """The static-cache recipe: the cache's tensors have a fixed shape and each
    step writes its keys and values at `cache_position` (index_copy_, an
    index_put in the graph), so one variant serves every decode step."""
    model = tiny_llama()
    prompt = torch.randint(0, 128, (1, 8))
    new = 8
    with torch.no_grad():
        want = model.generate(prompt, max_new_tokens=new, do_sample=False,
                              cache_implementation="static")
        model.forward = dynoc.compile(model.forward)
        before = dict(dynoc.counters)
        got = model.generate(prompt, max_new_tokens=new, do_sample=False,
                             cache_implementation="static")
    assert torch.equal(got, want)
    compiled = dynoc.counters["compiled_calls"] - before["compiled_calls"]
    # The prefill (which sizes the cache's layers: Python numbers written into
    # the cache, not replayed) and the first decode step capture; every later
    # decode step runs the built graph.
    assert compiled >= new - 2, dynoc.counters


def test_default_dynamic_cache_generate_runs_decode_steps_in_one_dynamic_variant():
    """generate()'s default: a DynamicCache whose layers' tensors grow by one
    position a step. The cache length Python reads (get_seq_length, the mask's
    query offset) stays symbolic, so the second decode step's recompile makes
    the first decode variant dynamic in the cache length and every later
    step runs that one built graph."""
    model = tiny_llama()
    new = 12
    with torch.no_grad():
        prompts = [torch.randint(0, 128, (1, n)) for n in (8, 5)]
        want = [model.generate(p, max_new_tokens=new, do_sample=False) for p in prompts]
        model.forward = dynoc.compile(model.forward)
        before = dict(dynoc.counters)
        got = model.generate(prompts[0], max_new_tokens=new, do_sample=False)
        first = dict(dynoc.counters)
        again = model.generate(prompts[1], max_new_tokens=new, do_sample=False)
    assert torch.equal(got, want[0]) and torch.equal(again, want[1])
    # The prefill (which initializes the cache's layers: literals written,
    # replayed) and two decode steps capture; the other decode steps run
    # built code.
    assert first["compiled_calls"] - before["compiled_calls"] == new - 3, first
    # The prefill, the decode variant and its dynamic rebuild; a decode
    # variant per length would build a graph a step.
    assert first["builds"] + first["cache_hits"] - before["builds"] - before["cache_hits"] <= 3
    # A new prompt length: the prefill recompiles, dynamic in the prompt
    # length; its decode steps are the same dynamic variant.
    assert dynoc.counters["compiled_calls"] - first["compiled_calls"] >= new - 1, dynoc.counters
    assert dynoc.counters["eager_variants"] == before["eager_variants"], dynoc.counters


def test_padded_batch_generate_runs_one_dynamic_decode_variant():
    """Serving's case: a batch of prompts of different lengths, left-padded
    with an attention mask. The mask code adds the cache length (a size) to
    a tensor; it is an input of the graph, so the decode steps share one
    variant dynamic in the cache and mask lengths."""
    model = tiny_llama()
    ids = torch.randint(1, 128, (2, 8))
    mask = torch.ones(2, 8, dtype=torch.long)
    ids[1, :3], mask[1, :3] = 0, 0
    new = 10
    with torch.no_grad():
        want = model.generate(ids, attention_mask=mask, max_new_tokens=new, do_sample=False,
                              pad_token_id=0)
        model.forward = dynoc.compile(model.forward)
        before = dict(dynoc.counters)
        got = model.generate(ids, attention_mask=mask, max_new_tokens=new, do_sample=False,
                             pad_token_id=0)
    assert torch.equal(got, want)
    assert dynoc.counters["compiled_calls"] - before["compiled_calls"] == new - 3, \
        dynoc.counters


class KVCache(torch.nn.Module):
    """gpt-fast's cache: buffers written in place at the step's positions."""

    def __init__(self, heads, max_len, head_dim):
        super().__init__()
        self.register_buffer("k_cache", torch.zeros(1, heads, max_len, head_dim))
        self.register_buffer("v_cache", torch.zeros(1, heads, max_len, head_dim))

    def update(self, input_pos, k_val, v_val):
        k_out, v_out = self.k_cache, self.v_cache
        k_out[:, :, input_pos] = k_val
        v_out[:, :, input_pos] = v_val
        return k_out, v_out


class Attention(torch.nn.Module):
    def __init__(self, dim=64, heads=4, max_len=32):
        super().__init__()
        self.wqkv = torch.nn.Linear(dim, 3 * dim, bias=False)
        self.wo = torch.nn.Linear(dim, dim, bias=False)
        self.heads, self.head_dim = heads, dim // heads
        self.kv_cache = KVCache(heads, max_len, dim // heads)
        self.register_buffer("causal", torch.tril(torch.ones(max_len, max_len, dtype=torch.bool)))

    def forward(self, x, input_pos):
        b, s, _ = x.shape
        q, k, v = self.wqkv(x).split(self.heads * self.head_dim, dim=-1)
        q, k, v = (t.view(b, s, self.heads, self.head_dim).transpose(1, 2) for t in (q, k, v))
        k, v = self.kv_cache.update(input_pos, k, v)
        mask = self.causal[None, None, input_pos]
        y = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        return self.wo(y.transpose(1, 2).reshape(b, s, -1))


class Decoder(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = torch.nn.Embedding(100, 64)
        self.layers = torch.nn.ModuleList([Attention() for _ in range(2)])
        self.out = torch.nn.Linear(64, 100)

    def forward(self, idx, input_pos):
        x = self.tok(idx)
        for layer in self.layers:
            x = x + layer(x, input_pos)
        return self.out(x)


def next_token(model, x, input_pos):
    return model(x, input_pos)[:, -1].argmax(-1, keepdim=True)


def test_gpt_fast_style_decode_loop_runs_compiled_after_the_first_step():
    """gpt-fast's loop: prefill compiled with dynamic=True, decode_one_token
    with mode="reduce-overhead", fullgraph=True; the KV write
    `k_out[:, :, input_pos] = k_val` is an index_put into the cache buffers."""
    torch.manual_seed(0)
    model = Decoder().eval()
    prompt = torch.randint(0, 100, (1, 6))

    def generate(prefill, decode, steps=10):
        for layer in model.layers:
            layer.kv_cache.k_cache.zero_()
            layer.kv_cache.v_cache.zero_()
        tok = prefill(model, prompt, torch.arange(prompt.shape[1]))
        out, pos = [tok], torch.tensor([prompt.shape[1]])
        for _ in range(steps):
            tok = decode(model, tok, pos)
            out.append(tok)
            pos = pos + 1
        return torch.cat(out, 1)

    with torch.no_grad():
        want = generate(next_token, next_token)
        decode = dynoc.compile(next_token, mode="reduce-overhead", fullgraph=True)
        prefill = dynoc.compile(next_token, dynamic=True)
        got = generate(prefill, decode)
    assert torch.equal(got, want)
    assert decode.compiled_calls() == 9  # every step but the capture
