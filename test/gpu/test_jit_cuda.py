"""dynoc.compile in the same process on the GPU (issue 16): a region whose
tensors are CUDA tensors is built with `--target=cuda` for this GPU's
architecture and its later calls run the built code on the caller's stream;
mode="reduce-overhead" replays them as CUDA graphs. Checked against torch
eager on the same GPU (TF32 off), with dynoc.counters saying the built code
ran and a profile saying the CUDA graphs were launched.

Needs the dynoc binary (tools/gpu_jit.sh stages a statically linked one and
sets DYNOC_BIN and the cuBLAS/cuDNN homes). Skips, with one line, where no
GPU is present (CI)."""
import math
import os

import pytest
import torch

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(),
                                reason="no CUDA GPU here: the GPU tests run on the GPU "
                                       "machine through tools/gpu_jit.sh")

torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
TOL = 1e-4


@pytest.fixture(autouse=True)
def fresh(tmp_path_factory, monkeypatch):
    import dynoc
    if "DYNOC_CACHE_DIR" not in os.environ:
        monkeypatch.setenv("DYNOC_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "cache"))
    dynoc.reset()
    yield
    dynoc.reset()


class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(64, 128)
        self.fc2 = torch.nn.Linear(128, 10)

    def forward(self, x):
        return torch.softmax(self.fc2(torch.nn.functional.gelu(self.fc1(x))), dim=-1)


class Block(torch.nn.Module):
    """A pre-norm transformer block: attention through SDPA, layer norm, MLP."""

    def __init__(self, d=64, heads=4):
        super().__init__()
        self.heads = heads
        self.ln1 = torch.nn.LayerNorm(d)
        self.qkv = torch.nn.Linear(d, 3 * d)
        self.proj = torch.nn.Linear(d, d)
        self.ln2 = torch.nn.LayerNorm(d)
        self.mlp = torch.nn.Sequential(torch.nn.Linear(d, 4 * d), torch.nn.GELU(),
                                       torch.nn.Linear(4 * d, d))

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=-1)
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        a = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(a.transpose(1, 2).reshape(b, t, d))
        return x + self.mlp(self.ln2(x))


class ConvNet(torch.nn.Module):
    """Convolution, BatchNorm (eval: cuDNN's batch norm kernel on the GPU),
    ReLU, max pooling, a classifier."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 16, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(16)
        self.fc = torch.nn.Linear(16 * 8 * 8, 10)
        self.bn.running_mean.uniform_(-0.5, 0.5)
        self.bn.running_var.uniform_(0.5, 2.0)

    def forward(self, x):
        y = torch.nn.functional.max_pool2d(torch.relu(self.bn(self.conv(x))), 2)
        return self.fc(y.flatten(1))


class Scores(torch.nn.Module):
    """Attention written out, its scores divided by a Python float (a 0-d
    CPU constant beside CUDA tensors)."""

    def __init__(self, d=32):
        super().__init__()
        self.d = d
        self.qkv = torch.nn.Linear(d, 3 * d)

    def forward(self, x):
        q, k, v = self.qkv(x).split(self.d, dim=-1)
        att = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(self.d), dim=-1)
        return att @ v


def close(got, want, tol=TOL):
    err = (got.float() - want.float()).abs().max().item()
    scale = want.float().abs().max().item()
    assert err <= tol * max(scale, 1.0), f"max abs error {err:.3e} (scale {scale:.3e})"


def graph_launches(fn):
    """How many cudaGraphLaunch calls `fn()` made (CUPTI sees libdynrt's)."""
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    return sum(e.count for e in prof.key_averages() if e.key == "cudaGraphLaunch")


@pytest.mark.parametrize("mode", [None, "reduce-overhead"])
@pytest.mark.parametrize("make,shape", [(MLP, (32, 64)), (Block, (2, 16, 64)),
                                        (ConvNet, (4, 3, 16, 16)), (Scores, (2, 8, 32))],
                         ids=["mlp", "block", "convnet", "scores"])
def test_a_cuda_module_runs_code_built_for_this_gpu(make, shape, mode):
    import dynoc
    torch.manual_seed(0)
    model = make().cuda().eval()
    xs = [torch.randn(shape, device="cuda") for _ in range(4)]
    with torch.no_grad():
        want = [model(x) for x in xs]
        compiled = dynoc.compile(model, mode=mode)
        before = dict(dynoc.counters)
        got = [compiled(x) for x in xs]
    for g, w in zip(got, want):
        assert g.device.type == "cuda"
        close(g, w)
    assert dynoc.counters["builds"] + dynoc.counters["cache_hits"] - \
        before["builds"] - before["cache_hits"] == 1
    assert dynoc.counters["compiled_calls"] - before["compiled_calls"] == 3
    assert dynoc.counters["eager_variants"] == before["eager_variants"]
    with torch.no_grad():
        launches = graph_launches(lambda: [compiled(x) for x in xs])
    print(f"{make.__name__} mode={mode}: {launches} CUDA graph launches in 4 calls")
    if mode == "reduce-overhead":
        assert launches >= 3  # the first call of a shape runs directly
    else:
        assert launches == 0


def test_the_weights_are_the_modules_cuda_tensors():
    import dynoc
    torch.manual_seed(0)
    model = MLP().cuda().eval()
    x = torch.randn(8, 64, device="cuda")
    compiled = dynoc.compile(model)
    with torch.no_grad():
        compiled(x)
        compiled(x)
        model.fc2.weight.mul_(2.0)  # in place, as an optimizer step would
        calls = dynoc.counters["compiled_calls"]
        got = compiled(x)
        assert dynoc.counters["compiled_calls"] == calls + 1
        close(got, model(x))


_model = None


def _print_between(x):
    y = _model(x)
    print("between the graphs", tuple(y.shape))
    return (y * 3).sum(-1)


@pytest.mark.parametrize("mode", [None, "reduce-overhead"])
def test_a_graph_break_resumes_on_the_gpu(capsys, mode):
    import dynoc
    global _model
    torch.manual_seed(0)
    _model = MLP().cuda().eval()
    f = _print_between
    compiled = dynoc.compile(f, mode=mode)
    xs = [torch.randn(4, 64, device="cuda") for _ in range(4)]
    with torch.no_grad():
        want = [f(x) for x in xs]
        before = dynoc.counters["compiled_calls"]
        got = [compiled(x) for x in xs]
        launches = graph_launches(lambda: [compiled(x) for x in xs])
    for g, w in zip(got, want):
        close(g, w)
    assert capsys.readouterr().out.count("between the graphs") == 12
    assert dynoc.counters["compiled_calls"] > before
    assert (launches > 0) == (mode == "reduce-overhead"), launches


@pytest.mark.parametrize("mode", [None, "reduce-overhead"])
def test_training_runs_built_forward_and_backward_on_the_gpu(mode):
    import dynoc
    torch.manual_seed(0)
    model = MLP().cuda()
    ref = MLP().cuda()
    ref.load_state_dict(model.state_dict())
    x = torch.randn(16, 64, device="cuda")
    compiled = dynoc.compile(model, mode=mode)
    before = dynoc.counters["compiled_calls"]

    def steps(m):
        for _ in range(3):
            m.zero_grad()
            m(x).square().sum().backward()
    steps(ref)
    launches = graph_launches(lambda: steps(compiled))
    assert dynoc.counters["compiled_calls"] > before
    for (n, p), q in zip(model.named_parameters(), ref.parameters()):
        close(p.grad, q.grad)
    # Forward and backward graphs both replay from the third step on.
    assert (launches >= 2) == (mode == "reduce-overhead"), launches


def test_a_cache_entry_is_reused_after_reset():
    import dynoc
    torch.manual_seed(0)
    model = MLP().cuda().eval()
    x = torch.randn(8, 64, device="cuda")
    with torch.no_grad():
        compiled = dynoc.compile(model)
        compiled(x), compiled(x)
        dynoc.reset()
        hits = dynoc.counters["cache_hits"]
        compiled = dynoc.compile(model)
        compiled(x), compiled(x)
    assert dynoc.counters["cache_hits"] == hits + 1


def test_a_transformers_model_on_the_gpu():
    transformers = pytest.importorskip("transformers")
    import dynoc
    torch.manual_seed(0)
    config = transformers.BertConfig(hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                                     intermediate_size=128, vocab_size=1000)
    model = transformers.BertModel(config).cuda().eval()
    ids = torch.randint(0, 1000, (2, 16), device="cuda")
    with torch.no_grad():
        want = model(ids).last_hidden_state
        compiled = dynoc.compile(model)
        before = dynoc.counters["compiled_calls"]
        for _ in range(3):
            got = compiled(ids).last_hidden_state
    close(got, want)
    assert dynoc.counters["compiled_calls"] - before == 2


def test_new_batch_sizes_make_a_dynamic_variant_on_the_gpu():
    """The second batch size recompiles with a dynamic batch dim (automatic
    dynamic shapes, as on the CPU); later sizes run that variant's built code."""
    import dynoc
    torch.manual_seed(0)
    model = Block().cuda().eval()
    compiled = dynoc.compile(model)
    with torch.no_grad():
        for b in (2, 2, 3, 5, 7, 5):
            x = torch.randn(b, 16, 64, device="cuda")
            close(compiled(x), model(x))
    region = compiled._dynoc_region
    assert region.compiled[-1] is not None, region.session.eager_reasons
    assert region.compiled_calls() >= 3  # sizes 5, 7 and 5 ran the dynamic variant


def rel_err(got, want):
    got, want = got.double(), want.double()
    return ((got - want).norm() / want.norm().clamp_min(1e-30)).item()


# Grouped-query attention at the shapes LLMs use (heads 16-32, head dim 64 and
# 128, GQA ratios 1, 4 and 8), causal and with an additive mask, float32 and
# bfloat16: what CUDA's fused kernels take with enable_gqa=True.
GQA_SHAPES = [(2, 16, 4, 256, 64, "causal"), (1, 32, 4, 512, 128, "causal"),
              (2, 16, 16, 128, 64, "mask"), (2, 32, 4, 128, 128, "mask"),
              (1, 16, 2, 1024, 64, "causal")]


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=["f32", "bf16"])
@pytest.mark.parametrize("b,hq,hkv,t,d,kind", GQA_SHAPES,
                         ids=[f"{b}x{hq}q{hkv}kv_t{t}_d{d}_{k}" for b, hq, hkv, t, d, k in GQA_SHAPES])
def test_grouped_query_attention_matches_eager(b, hq, hkv, t, d, kind, dtype):
    import dynoc
    F = torch.nn.functional

    def attend(q, k, v, mask):
        if mask is None:
            return F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, enable_gqa=True)

    compiled = dynoc.compile(attend)
    before = dict(dynoc.counters)
    for step in range(3):  # build, then built code twice, fresh inputs each call
        torch.manual_seed(step)
        q = torch.randn(b, hq, t, d, device="cuda", dtype=dtype)
        k, v = (torch.randn(b, hkv, t, d, device="cuda", dtype=dtype) for _ in range(2))
        mask = None if kind == "causal" else \
            torch.randn(1, 1, t, t, device="cuda", dtype=dtype)
        with torch.no_grad():
            want = attend(q.double(), k.double(), v.double(),
                          None if mask is None else mask.double())
            got = compiled(q, k, v, mask)
        assert got.dtype == dtype and torch.isfinite(got).all()
        err = rel_err(got, want)
        assert err <= (1e-4 if dtype == torch.float32 else 1e-2), \
            f"call {step}: relative error {err:.2e}"
    assert dynoc.counters["compiled_calls"] - before["compiled_calls"] >= 2
    assert dynoc.counters["eager_variants"] == before["eager_variants"]
    if dtype == torch.bfloat16 and os.environ.get("DYNOC_CUDNN_FRONTEND_HOME"):
        # Built with the cuDNN frontend (tools/gpu_jit.sh): cuDNN's fused
        # attention ran, not the library's fallback kernels.
        kernels = gpu_kernels(lambda: compiled(q, k, v, mask))
        assert any("sdpa" in name for name in kernels), kernels
        assert not any("flashAttentionKernel" in name or "attentionKernel" in name
                       for name in kernels), kernels


def gpu_kernels(call):
    """The names of the GPU kernels `call` ran (CUPTI sees libdynrt's too)."""
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        call()
        torch.cuda.synchronize()
    return {ev.name for ev in prof.events()
            if ev.device_type == torch.autograd.DeviceType.CUDA}


@pytest.mark.parametrize("mode", [None, "reduce-overhead"])
def test_a_projection_to_an_odd_width_matches_eager_on_fast_kernels(mode):
    """GPT-2's vocabulary projection (50257 columns): each output row starts
    unaligned, so the GEMM runs into padded scratch and is packed (gemm.cu's
    runPaddedGemm); in a CUDA graph too."""
    import dynoc
    torch.manual_seed(0)
    proj = torch.nn.Linear(768, 1001, bias=False).to("cuda", torch.bfloat16)
    compiled = dynoc.compile(proj, mode=mode)
    before = dynoc.counters["compiled_calls"]
    for step in range(3):
        x = torch.randn(4096, 768, device="cuda", dtype=torch.bfloat16)
        with torch.no_grad():
            got, want = compiled(x), proj(x)
        assert got.shape == want.shape and got.is_contiguous()
        err = rel_err(got, want)
        assert err <= 1e-2, f"call {step}: relative error {err:.2e}"
    assert dynoc.counters["compiled_calls"] - before >= 2
    with torch.no_grad():
        kernels = gpu_kernels(lambda: compiled(x))
    assert not any("align1" in name for name in kernels), kernels


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=["f32", "bf16"])
@pytest.mark.parametrize("batch,seq", [(1, 128), (2, 64)])
def test_a_transformers_llama_with_grouped_query_heads_matches_eager(batch, seq, dtype):
    """transformers' Llama (8 query heads, 2 key/value heads) built for CUDA:
    its logits match eager's, and the built code ran."""
    transformers = pytest.importorskip("transformers")
    import dynoc
    cfg = transformers.LlamaConfig(vocab_size=1000, hidden_size=256, intermediate_size=512,
                                   num_hidden_layers=2, num_attention_heads=8,
                                   num_key_value_heads=2, max_position_embeddings=512)
    torch.manual_seed(0)
    model = transformers.LlamaForCausalLM(cfg).to("cuda", dtype).eval()
    ids = [torch.randint(0, 1000, (batch, seq), device="cuda") for _ in range(3)]
    with torch.no_grad():
        want = [model(i, use_cache=False).logits for i in ids]
        compiled = dynoc.compile(model)
        before = dict(dynoc.counters)
        got = [compiled(i, use_cache=False).logits for i in ids]
    for g, w in zip(got, want):
        assert torch.isfinite(g).all()
        err = rel_err(g, w)
        assert err <= (1e-4 if dtype == torch.float32 else 2e-2), f"relative error {err:.2e}"
    assert dynoc.counters["compiled_calls"] - before["compiled_calls"] >= 2, dict(dynoc.counters)
    assert dynoc.counters["eager_variants"] == before["eager_variants"]


@pytest.mark.parametrize("mode", [None, "reduce-overhead"])
def test_static_cache_generate_decodes_compiled_on_the_gpu(mode):
    """transformers' static-cache recipe on the GPU: generate() with the
    model's forward compiled; every decode step after the first capture runs
    the built CUDA code (its KV write is an index_put), tokens equal eager's
    (greedy, f32)."""
    transformers = pytest.importorskip("transformers")
    import dynoc
    cfg = transformers.LlamaConfig(vocab_size=1000, hidden_size=256, intermediate_size=512,
                                   num_hidden_layers=2, num_attention_heads=8,
                                   num_key_value_heads=2, max_position_embeddings=256)
    torch.manual_seed(0)
    model = transformers.LlamaForCausalLM(cfg).cuda().eval()
    prompt = torch.randint(0, 1000, (1, 16), device="cuda")
    new = 12
    # disable_compile: on a GPU, generate() would torch.compile the forward
    # itself for a static cache (Dynamo over dynoc's region).
    with torch.no_grad():
        want = model.generate(prompt, max_new_tokens=new, do_sample=False,
                              cache_implementation="static", disable_compile=True)
        model.forward = dynoc.compile(model.forward, mode=mode)
        before = dict(dynoc.counters)
        got = model.generate(prompt, max_new_tokens=new, do_sample=False,
                             cache_implementation="static", disable_compile=True)
    assert torch.equal(got, want)
    assert dynoc.counters["compiled_calls"] - before["compiled_calls"] >= new - 2, \
        dict(dynoc.counters)


@pytest.mark.parametrize("padded", [False, True], ids=["one", "padded-batch"])
def test_default_cache_generate_decodes_in_one_dynamic_variant_on_the_gpu(padded):
    """generate()'s default DynamicCache on the GPU: the cache length the mask
    code adds to a tensor is a 0-d input made on the model's device at each
    call, so the decode steps after the first two run one variant dynamic in
    the cache length; tokens equal eager's (greedy, f32)."""
    transformers = pytest.importorskip("transformers")
    import dynoc
    cfg = transformers.LlamaConfig(vocab_size=1000, hidden_size=256, intermediate_size=512,
                                   num_hidden_layers=2, num_attention_heads=8,
                                   num_key_value_heads=2, max_position_embeddings=256,
                                   pad_token_id=0)
    torch.manual_seed(0)
    model = transformers.LlamaForCausalLM(cfg).cuda().eval()
    ids = torch.randint(1, 1000, (2 if padded else 1, 16), device="cuda")
    mask = torch.ones_like(ids)
    if padded:
        ids[1, :5], mask[1, :5] = 0, 0
    new = 12
    with torch.no_grad():
        want = model.generate(ids, attention_mask=mask, max_new_tokens=new, do_sample=False)
        model.forward = dynoc.compile(model.forward)
        before = dict(dynoc.counters)
        got = model.generate(ids, attention_mask=mask, max_new_tokens=new, do_sample=False)
    assert torch.equal(got, want)
    assert dynoc.counters["compiled_calls"] - before["compiled_calls"] >= new - 3, \
        dict(dynoc.counters)
    assert dynoc.counters["eager_variants"] == before["eager_variants"], dict(dynoc.counters)


def test_clamps_as_strided_and_diagonal_on_the_gpu():
    """Ops issue 48 added through the shared emitter: scalar clamps in CUDA's
    elementwise kernels, as_strided/diagonal as strided gathers on the
    device."""
    import dynoc

    def views(x):
        return (torch.clamp(x, -0.5, 0.5), torch.clamp_min(x, 0.1), x.diagonal(1) * 2,
                torch.as_strided(x + 1, (3, 2), (1, 5), 2),
                torch.nn.functional.normalize(x, dim=1))

    x = torch.randn(4, 5, device="cuda")
    f = dynoc.compile(views)
    f(x)
    got = f(x)
    assert f.compiled_calls() == 1
    for g, w in zip(got, views(x)):
        assert g.device.type == "cuda"
        torch.testing.assert_close(g, w)


GPU_LOSSES = {
    "hardsigmoid": lambda x, t: (torch.nn.functional.hardsigmoid(x * 4) * t).sum(),
    "relu6": lambda x, t: (torch.nn.functional.relu6(x * 4) * t).sum(),
    "mish": lambda x, t: (torch.nn.functional.mish(x) * t).sum(),
    "smooth_l1": lambda x, t: torch.nn.functional.smooth_l1_loss(x, t, beta=0.5),
    "huber": lambda x, t: torch.nn.functional.huber_loss(x, t, delta=0.7),
    "softshrink": lambda x, t: (torch.nn.functional.softshrink(x) * t).sum(),
    "hardshrink": lambda x, t: (torch.nn.functional.hardshrink(x, 0.4) * t).sum(),
    "logsigmoid": lambda x, t: (torch.nn.functional.logsigmoid(x * 3) * t).sum(),
}


@pytest.mark.parametrize("name", sorted(GPU_LOSSES))
def test_activation_and_loss_gradients_on_the_gpu(name):
    """The backward decompositions of issue 47 (hardsigmoid, hardtanh, mish,
    smooth L1, Huber, the shrinks, log-sigmoid) through the CUDA target: built forward and backward,
    eager's gradients."""
    import dynoc
    fn = GPU_LOSSES[name]
    t = torch.rand(8, 16, device="cuda")
    f = dynoc.compile(fn)
    for _ in range(3):
        x = torch.randn(8, 16, device="cuda", requires_grad=True)
        f(x, t).backward()
        ref = x.detach().clone().requires_grad_(True)
        fn(ref, t).backward()
        torch.testing.assert_close(x.grad, ref.grad, rtol=1e-5, atol=1e-6)
    assert f.compiled_calls() == 2


GPU_OPTIMIZERS = {
    # on CUDA torch's default implementation is foreach
    "adamw": lambda p: torch.optim.AdamW(p, lr=1e-2),
    "adamw_fused": lambda p: torch.optim.AdamW(p, lr=1e-2, fused=True),
    "sgd_momentum": lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.9),
}


def _train_step_run(make_opt, model, compiled, steps=6, clip=None):
    import copy
    import dynoc
    from dynoc.jit import built
    model = copy.deepcopy(model)
    opt = make_opt(model.parameters())

    def train_step(x, y):
        loss = torch.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        if clip is not None:
            torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        opt.step()
        return loss.detach()

    step = dynoc.compile(train_step) if compiled else train_step
    before = built.counters["compiled_calls"]
    g = torch.Generator(device="cuda").manual_seed(1)
    losses = []
    for _ in range(steps):
        x = torch.randn(32, 64, device="cuda", generator=g)
        y = torch.randint(0, 10, (32,), device="cuda", generator=g)
        losses.append(float(step(x, y)))
    return losses, list(model.parameters()), built.counters["compiled_calls"] - before


@pytest.mark.parametrize("name", sorted(GPU_OPTIMIZERS))
def test_whole_training_step_compiled_on_the_gpu(name):
    """A compiled train_step (forward, backward, clip, optimizer update) on
    CUDA tensors (issue 47): the optimizer rules apply on the GPU, the step
    graph is built for it, every call after the first two runs it, and the
    losses, parameters and gradients are eager's."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.GELU(),
                                torch.nn.Linear(128, 10)).cuda()
    want, want_params, _ = _train_step_run(GPU_OPTIMIZERS[name], model, False, clip=1.0)
    got, params, calls = _train_step_run(GPU_OPTIMIZERS[name], model, True, clip=1.0)
    assert calls == 4
    torch.testing.assert_close(torch.tensor(got), torch.tensor(want), rtol=1e-5, atol=1e-6)
    for p, q in zip(params, want_params):
        torch.testing.assert_close(p, q, rtol=1e-4, atol=1e-5)
        torch.testing.assert_close(p.grad, q.grad, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_transformer_training_step_with_attention_on_the_gpu(dtype):
    """A compiled train_step through causal SDPA on CUDA (issue 47): the
    fused attention kernel's backward is recorded as the dialect's attention
    backward, which the CUDA target builds as GEMMs and a softmax (it ran
    eagerly: `_scaled_dot_product_efficient_attention is not an op`); f32
    attention itself is two GEMMs and a softmax there, bf16 cuDNN's; a bf16
    layer norm's statistics are computed in f32. Built steps run and train as
    eager does."""
    import copy
    import dynoc
    from dynoc.jit import built
    torch.manual_seed(0)
    base = torch.nn.Sequential(Block(64, 4), torch.nn.Linear(64, 10)).cuda().to(dtype)

    def run(compiled):
        model = copy.deepcopy(base)
        # SGD: its update is linear in the gradient, so parameters compare
        # (Adam's normalized steps amplify rounding in near-zero gradients)
        opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)

        def train_step(x, y):
            loss = torch.nn.functional.cross_entropy(model(x).float().mean(1), y)
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
            return loss.detach()

        step = dynoc.compile(train_step) if compiled else train_step
        before = built.counters["compiled_calls"]
        g = torch.Generator(device="cuda").manual_seed(1)
        losses = []
        for _ in range(6):
            x = torch.randn(4, 32, 64, device="cuda", generator=g).to(dtype)
            y = torch.randint(0, 10, (4,), device="cuda", generator=g)
            losses.append(float(step(x, y)))
        return losses, model, built.counters["compiled_calls"] - before

    want, want_model, _ = run(False)
    got, model, calls = run(True)
    assert calls == 4
    tol = dict(rtol=1e-4, atol=1e-5) if dtype == torch.float32 else dict(rtol=3e-2, atol=3e-2)
    torch.testing.assert_close(torch.tensor(got), torch.tensor(want), **tol)
    for p, q in zip(model.parameters(), want_model.parameters()):
        torch.testing.assert_close(p.float(), q.float(), **tol)


def test_reductions_with_little_parallelism_split_in_two_passes():
    """A whole-tensor sum, a gradient-norm-like sum of squares, a bias
    gradient's column sum over many rows, means and a max with a NaN over
    long rows (nn.cu's two-pass reductions): eager's values, in f32 and bf16."""
    import dynoc

    def f(x, y):
        return (x.sum(), (x * x).sum().sqrt(), x.sum(0), x.mean(0), x.mean(),
                y.amax(1), y.float().mean(1), y.amin(1))

    x = torch.randn(40000, 96, device="cuda")
    y = torch.randn(4, 300000, device="cuda").to(torch.bfloat16)
    y[2, 123456] = float("nan")
    c = dynoc.compile(f)
    for _ in range(2):
        got, want = c(x, y), f(x, y)
        for a, b in zip(got, want):
            torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-3, equal_nan=True)
    assert c.compiled_calls() == 1
