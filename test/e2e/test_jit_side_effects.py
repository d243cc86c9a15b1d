"""Python side effects and Python objects in compiled calls (docs/capture.md,
"Results and side effects"): a compiled call makes again what eager makes
(attributes written into its arguments, new objects it returns holding
tensors, tensors read out of its arguments' containers), and what it cannot
make again runs eagerly with the reason said, never a stale value."""
import warnings

import pytest
import torch

import dynoc


@pytest.fixture(autouse=True)
def _fresh_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("DYNOC_CACHE_DIR", str(tmp_path / "cache"))
    dynoc.reset()


def compiled_calls(fn):
    return fn.compiled_calls()


class State:
    """A plain object a program passes in and writes into."""


class Box:
    """A plain object a program makes and returns."""


def test_an_attribute_written_into_an_argument_is_written_by_compiled_calls():
    def step(x, state):
        state.last = x.sin() * 2
        state.parts = (x[0], None)
        return x + 1

    f = dynoc.compile(step)
    for _ in range(3):
        x = torch.randn(4, 5)
        s = State()
        out = f(x, s)
        torch.testing.assert_close(out, x + 1)
        torch.testing.assert_close(s.last, x.sin() * 2)
        torch.testing.assert_close(s.parts[0], x[0])
        assert s.parts[1] is None
    assert compiled_calls(f) == 2


def test_a_new_object_holding_tensors_is_made_again_by_each_compiled_call():
    def make(x):
        b = Box()
        b.t = x.cos()
        b.pair = [x * 3, "label"]
        b.dtype = x.dtype
        return b

    f = dynoc.compile(make)
    seen = []
    for _ in range(3):
        x = torch.randn(6)
        b = f(x)
        assert type(b) is Box and b.pair[1] == "label" and b.dtype is torch.float32
        torch.testing.assert_close(b.t, x.cos())
        torch.testing.assert_close(b.pair[0], x * 3)
        seen.append(b)
    assert len({id(b) for b in seen}) == 3, "each call returns an object of its own"
    assert compiled_calls(f) == 2


def test_tensors_in_an_argument_dict_are_inputs_not_constants():
    f = dynoc.compile(lambda d: d["x"] * 2 + d["y"])
    for _ in range(3):
        d = {"x": torch.randn(4), "y": torch.randn(4)}
        torch.testing.assert_close(f(d), d["x"] * 2 + d["y"])
    assert compiled_calls(f) == 2


def test_container_methods_on_arguments_are_replayed_by_compiled_calls():
    """`acc.append(t)`, `extend` and a dict's `update` on containers the
    call's arguments hold: compiled calls make them again with this call's
    tensors, in order (they ran eagerly: "changes L['acc'] with append()").
    (An argument holding a Python number or string the call computed is not
    replayed: the next call might pass another.)"""
    def collect(x, acc, stats):
        y = x * 2
        acc.append(x.sum())
        acc.extend([y.max(), y.min()])
        stats["log"].update({"last": y.mean()})
        return y

    f = dynoc.compile(collect)
    acc, stats = [], {"log": {}}
    for step in range(3):
        x = torch.randn(3)
        y = f(x, acc, stats)
        torch.testing.assert_close(y, x * 2)
        assert len(acc) == 3 * (step + 1)
        torch.testing.assert_close(acc[-3], x.sum())
        torch.testing.assert_close(acc[-2], y.max())
        torch.testing.assert_close(acc[-1], y.min())
        torch.testing.assert_close(stats["log"]["last"], y.mean())
    assert compiled_calls(f) == 2


def test_a_container_method_that_cannot_be_replayed_runs_eagerly_and_says_why():
    def take(x, queue):
        first = queue.pop()  # its result feeds the program: not replayed
        return x * first

    f = dynoc.compile(take)
    queue = [2.0, 3.0, 4.0, 5.0]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        outs = [f(torch.ones(2), queue) for _ in range(3)]
    assert [o.tolist() for o in outs] == [[5.0, 5.0], [4.0, 4.0], [3.0, 3.0]]
    assert compiled_calls(f) == 0
    said = [str(w.message) for w in caught if "run eagerly" in str(w.message)]
    assert said and "changes L['queue'] with pop()" in said[0], said


def test_a_python_number_written_runs_eagerly_it_may_differ_next_call():
    def count(x, state):
        state.n = getattr(state, "n", 0) + 1  # read without a guard
        return x + 1

    f = dynoc.compile(count)
    s = State()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(3):
            f(torch.randn(2), s)
    assert s.n == 3 and compiled_calls(f) == 0
    assert any("holds a Python int" in str(w.message) for w in caught)


def test_a_literal_written_is_replayed_by_compiled_calls():
    """A cache's lazy initialization (`self.is_initialized = True` in
    transformers' cache layers): a literal of the code is the same on every
    call, so compiled calls write it again; reached through a method of an
    argument's attribute (an object the evaluator finds by its path)."""
    class Layer:
        def init(self, like):
            self.keys = like.new_zeros(like.shape)
            self.is_initialized = True
            self.mode = "ready"

    def first(x, cache):
        cache.layers[0].init(x)
        cache.steps = 0
        return x + 1

    f = dynoc.compile(first)
    for _ in range(3):
        cache = State()
        cache.layers = [Layer()]
        out = f(torch.ones(2), cache)
        assert out.tolist() == [2.0, 2.0]
        layer = cache.layers[0]
        assert layer.is_initialized is True and layer.mode == "ready" and cache.steps == 0
        assert layer.keys.tolist() == [0.0, 0.0]
    assert compiled_calls(f) == 2


def test_a_size_written_is_replayed_and_its_variant_stays_static(caplog):
    """A static cache's lazy initialization (transformers'
    `self.batch_size, self.num_heads = key_states.shape[:2]`): sizes of a
    computed tensor, written into an object the call reaches by a path the
    evaluator does not name, are the same in every call of a static variant
    (its shapes are guarded), so compiled calls write them again; new sizes
    make a new static variant, never a dynamic one replaying a stale size."""
    class Layer:
        def init(self, keys):
            self.batch_size, self.num_heads = keys.shape[:2]
            self.width = keys.shape[-1]

    proj = torch.nn.Linear(8, 8)

    def prefill(x, cache):
        keys = proj(x).view(x.shape[0], 2, 4)
        cache.layers[0].init(keys)
        return keys * 2

    f = dynoc.compile(prefill)
    eager_before = dynoc.counters["eager_variants"]
    for batch in (3, 3, 3, 5, 5, 3):
        cache = State()
        cache.layers = [Layer()]
        with torch.no_grad():
            out = f(torch.randn(batch, 8), cache)
        layer = cache.layers[0]
        assert (layer.batch_size, layer.num_heads, layer.width) == (batch, 2, 4)
        assert out.shape == (batch, 2, 4)
    assert compiled_calls(f) == 4  # the repeats of each size
    assert dynoc.counters["eager_variants"] == eager_before


def test_explain_lists_why_calls_would_run_eagerly():
    """dynoc.explain says what the in-process warning would: the reason a
    variant's calls would run eagerly, without building anything."""
    def count(x, state):
        state.n = getattr(state, "n", 0) + 1
        return x + 1

    builds = dynoc.counters["builds"]
    e = dynoc.explain(count)(torch.ones(2), State())
    assert len(e.eager_reasons) == 1, e.eager_reasons
    assert "it writes L['state'].n, a Python side effect dynoc cannot replay" in \
        e.eager_reasons[0]["reason"]
    assert "runs eagerly in process: " in str(e)
    assert dynoc.counters["builds"] == builds
    assert dynoc.explain(lambda x: x + 1)(torch.ones(2)).eager_reasons == []


def test_a_write_undone_within_the_call_is_no_side_effect():
    flags = State()
    flags.compiling = False

    def forward(x):
        flags.compiling = True
        y = x.relu()
        flags.compiling = False
        return y

    f = dynoc.compile(forward)
    for _ in range(3):
        x = torch.randn(5)
        torch.testing.assert_close(f(x), x.relu())
    assert flags.compiling is False
    assert compiled_calls(f) == 2


def test_transformers_dynamic_cache_decode_steps_run_compiled_with_eager_tokens():
    transformers = pytest.importorskip("transformers")
    torch.manual_seed(0)
    cfg = transformers.LlamaConfig(vocab_size=96, hidden_size=32, intermediate_size=64,
                                   num_hidden_layers=2, num_attention_heads=4,
                                   num_key_value_heads=2, max_position_embeddings=64)
    model = transformers.LlamaForCausalLM(cfg).eval()
    prompt = torch.randint(0, 96, (1, 6))

    def decode(forward, steps=3):
        """Greedy decoding by hand, as generate() calls forward: the prefill
        returns a new DynamicCache, each step passes it back in and the model
        appends to its layers' tensors."""
        out = forward(input_ids=prompt, use_cache=True)
        cache, tokens = out.past_key_values, []
        for _ in range(steps):
            tok = out.logits[:, -1:].argmax(-1)
            tokens.append(int(tok))
            out = forward(input_ids=tok, past_key_values=cache, use_cache=True)
            assert out.past_key_values is cache, "the cache passed in is the one returned"
        return tokens, out.logits, cache.get_seq_length()

    with torch.no_grad():
        want = decode(model.forward)
        compiled = dynoc.compile(model.forward)
        first = decode(compiled)  # captures a variant per cache length
        again = decode(compiled)  # the same lengths: every call compiled
    for got in (first, again):
        assert got[0] == want[0] and got[2] == want[2]
        torch.testing.assert_close(got[1], want[1])
    assert compiled_calls(compiled) >= 4
