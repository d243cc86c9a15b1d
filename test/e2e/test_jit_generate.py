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
