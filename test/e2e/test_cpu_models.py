"""The CPU model suite (bench/cpu/models.py) captured, built and run through libdynrt:
each matches PyTorch eager within 1e-4 (max relative error), and the build reports
what the passes did."""
import json
import os
import sys

import pytest
import torch

from conftest import ROOT, run

sys.path.insert(0, os.path.join(ROOT, "bench", "cpu"))
import models  # noqa: E402

SCRIPT = """\
import sys
sys.path.insert(0, {bench!r})
import torch, models
m, x = models.make({name!r}, {batch})
with torch.no_grad():
    torch.compile(m)(x)
"""


@pytest.mark.parametrize("name", models.NAMES)
def test_model_matches_eager(dynoc, tmp_path, name):
    import dynoc as dynoc_py
    batch = 3
    script = tmp_path / "capture_me.py"
    script.write_text(SCRIPT.format(bench=os.path.join(ROOT, "bench", "cpu"), name=name,
                                    batch=batch))
    dynoc("capture", script, "-o", tmp_path / "out", check=True)
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert len(manifest["graphs"]) == 1
    # No more breaks than PyTorch's Dynamo makes on the same script (0 on each).
    ref_json = tmp_path / "dynamo.json"
    run(sys.executable, os.path.join(ROOT, "test", "capture", "dynamo_reference.py"),
        ref_json, script, check=True)
    dynamo = json.loads(ref_json.read_text())
    assert (len(manifest["graphs"]), len(manifest["breaks"])) == \
        (dynamo["graphs"], dynamo["breaks"]), (manifest["breaks"], dynamo)
    build = dynoc("build", tmp_path / "out" / "graph_0.mlir", "-o", tmp_path / "m.so",
                  check=True)
    assert "peak intermediate bytes" in build.stderr
    if name == "cnn":  # batch norms fold into the convolutions, at load time
        assert "op(s) on weights alone run once at load (graph_0__prepare)" \
            in build.stderr, build.stderr
    m, x = models.make(name, batch)
    with torch.no_grad():
        ref = m(x)
    got = models.main_output(dynoc_py.load(tmp_path / "m.so")(x))
    ref = models.main_output(ref)
    rel = ((got - ref).abs().max() / ref.abs().max()).item()
    print(f"{name}: max relative error {rel:.2e}")
    assert rel <= 1e-4
    # What the build compiled, after its passes: the MLP's and the CNN's GEMM
    # and convolution epilogues are fused (the encoder's GEMMs feed views).
    dynoc("build", tmp_path / "out" / "graph_0.mlir", "-o", tmp_path / "m.mlir",
          "--emit=mlir", check=True)
    groups = (tmp_path / "m.mlir").read_text().count('dynoc.fusion_group "epilogue"')
    assert groups == {"mlp": 2, "cnn": 2, "encoder_block": 0, "bert": 0, "gpt2": 0}[name]


BF16_SCRIPT = """\
import sys
sys.path.insert(0, {bench!r})
import torch, models
m, x = models.make({name!r}, 2)
m = m.to(torch.bfloat16)
if x.is_floating_point():
    x = x.to(torch.bfloat16)
with torch.no_grad():
    torch.compile(m)(x)
"""


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow)
                                  if n in ("bert", "gpt2") else n for n in models.NAMES])
def test_model_in_bfloat16_matches_eager(dynoc, tmp_path, name):
    """The suite in bfloat16: weights and activations stay bf16, each op
    computes in f32 and rounds once (dynoc-widen-reduced-precision), as eager
    does; the outputs agree to bf16's precision (max error over max value)."""
    import dynoc as dynoc_py
    script = tmp_path / "capture_me.py"
    script.write_text(BF16_SCRIPT.format(bench=os.path.join(ROOT, "bench", "cpu"), name=name))
    dynoc("capture", script, "-o", tmp_path / "out", check=True)
    dynoc("build", tmp_path / "out" / "graph_0.mlir", "-o", tmp_path / "m.so", check=True)
    m, x = models.make(name, 2)
    m = m.to(torch.bfloat16)
    if x.is_floating_point():
        x = x.to(torch.bfloat16)
    with torch.no_grad():
        ref = models.main_output(m(x))
    got = models.main_output(dynoc_py.load(tmp_path / "m.so")(x))
    assert got.dtype == torch.bfloat16 and got.shape == ref.shape
    rel = ((got.float() - ref.float()).abs().max() / ref.float().abs().max()).item()
    print(f"{name} bf16: max relative error {rel:.2e}")
    assert rel <= 2e-2


DYNAMIC_SCRIPT = """\
import sys
sys.path.insert(0, {bench!r})
import torch, models
m, _ = models.make({name!r}, 2)
f = torch.compile(m)
with torch.no_grad():
    for size in {sizes!r}:
        f(({make})(*size))
"""


def check_dynamic_capture(dynoc, tmp_path, name, make, sizes, dims, others):
    """Captures `name` called at `sizes` (inputs from `make`, an expression
    over `models`): one graph whose input dims `dims` turned dynamic at the
    first recompile; built once, it matches eager at the `others` sizes."""
    import dynoc as dynoc_py
    script = tmp_path / "capture_me.py"
    script.write_text(DYNAMIC_SCRIPT.format(bench=os.path.join(ROOT, "bench", "cpu"),
                                            name=name, sizes=sizes, make=make))
    cap = dynoc("capture", script, "-o", tmp_path / "out", check=True)
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert len(manifest["graphs"]) == 1, cap.stderr
    user = manifest["graphs"][0]["inputs"][0]
    assert [r.get("dynamic") for r in manifest["recompiles"]] == [{user["name"]: dims}], \
        manifest["recompiles"]
    assert all(user["shape"][d] is None for d in dims)
    dynoc("build", tmp_path / "out" / "graph_0.mlir", "-o", tmp_path / "m.so", check=True)
    model = dynoc_py.load(tmp_path / "m.so")
    m, _ = models.make(name, 1)
    for size in others:
        x = eval(make, {"models": models})(*size)  # noqa: S307 - the test's own text
        with torch.no_grad():
            ref = models.main_output(m(x))
        got = models.main_output(model(x))
        assert got.shape == ref.shape
        rel = ((got - ref).abs().max() / ref.abs().max()).item()
        assert rel <= 1e-4, (size, rel)
    return tmp_path / "out" / "graph_0.mlir"


@pytest.mark.parametrize("name", models.NAMES)
def test_model_dynamic_batch(dynoc, tmp_path, name):
    """Calls at batch 2, 3 and 4 (automatic dynamic shapes, as Dynamo's default
    does): the second merges the first variant into one graph whose batch dim
    is dynamic (BERT's token type ids expand to the ids' shape: expand_as), the
    third reuses it; the graph, built once, matches eager at other batches."""
    make = f"lambda b: models.example_input({name!r}, b)"
    check_dynamic_capture(dynoc, tmp_path, name, make, [(2,), (3,), (4,)], [0], [(1,), (5,)])


@pytest.mark.parametrize("name", ["encoder_block", "bert", "gpt2"])
def test_model_dynamic_batch_and_sequence(dynoc, tmp_path, name):
    """Batch and sequence length both change: the second call merges into one
    graph with both dims dynamic (the views F.linear's decomposition makes,
    GPT-2's position arange and BERT's position-id slice get their sizes as
    expressions of the input dims, dynoc.sym_sizes); built once, it matches
    eager at other sizes."""
    make = f"models.INPUTS_BY_LENGTH[{name!r}]"
    mlir = check_dynamic_capture(dynoc, tmp_path, name, make, [(2, 16), (3, 24), (4, 20)],
                                 [0, 1], [(1, 7), (5, 33)])
    assert "dynoc.sym_sizes" in mlir.read_text()


MASKED_SCRIPT = """\
import torch, torch.nn as nn, transformers
torch.manual_seed(0)
cfg = transformers.{cfg}
class Classifier(nn.Module):
    # A head on the model's last hidden state, the model called with keywords.
    def __init__(self):
        super().__init__()
        self.body = transformers.{model}(cfg)
        self.head = nn.Linear(64, 3)
    def forward(self, input_ids, attention_mask):
        out = self.body(input_ids=input_ids, attention_mask=attention_mask)
        return self.head(out.last_hidden_state)
model = Classifier().eval()
torch.save(model.state_dict(), {weights!r})
f = torch.compile(model)
with torch.no_grad():
    for t in (8, 12, 16):
        ids = torch.randint(0, 500, (2, t))
        mask = torch.ones(2, t, dtype=torch.long)
        mask[1, -3:] = 0
        print(tuple(f(input_ids=ids, attention_mask=mask).shape))
"""

MASKED_MODELS = {
    "bert": ("BertConfig(num_hidden_layers=2, num_attention_heads=4, hidden_size=64, "
             "intermediate_size=128, vocab_size=500, max_position_embeddings=64)", "BertModel"),
    "gpt2": ("GPT2Config(n_layer=2, n_head=4, n_embd=64, vocab_size=500, n_positions=64, "
             "bos_token_id=0, eos_token_id=0, use_cache=False)", "GPT2Model"),
}


@pytest.mark.parametrize("name", sorted(MASKED_MODELS))
def test_wrapped_model_with_attention_mask_goes_dynamic(dynoc, tmp_path, name):
    """BERT / GPT-2 inside a classification wrapper, called with keywords and a
    padded attention mask at three lengths: the second length makes the one
    graph dynamic in the ids' and the mask's length (transformers' mask code
    returns the mask length from a helper, and the wrapper drops the pooler's
    ops; each used to keep the graph static); built once, it matches eager at
    lengths it never saw."""
    import dynoc as dynoc_py
    import transformers
    cfg, cls = MASKED_MODELS[name]
    script = tmp_path / "capture_me.py"
    weights = tmp_path / "weights.pt"
    script.write_text(MASKED_SCRIPT.format(cfg=cfg, model=cls, weights=str(weights)))
    cap = dynoc("capture", script, "-o", tmp_path / "out", check=True)
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert len(manifest["graphs"]) == 1 and not manifest["breaks"], cap.stderr
    assert [r.get("dynamic") for r in manifest["recompiles"]] == \
        [{"L['input_ids']": [1], "L['attention_mask']": [1]}], manifest["recompiles"]
    dynoc("build", tmp_path / "out" / "graph_0.mlir", "-o", tmp_path / "m.so", check=True)
    built = dynoc_py.load(tmp_path / "m.so")
    body = getattr(transformers, cls)(eval("transformers." + cfg, {"transformers": transformers}))
    model = torch.nn.Module()
    model.body, model.head = body, torch.nn.Linear(64, 3)
    model.load_state_dict(torch.load(weights))
    model.eval()
    order = [v["name"] for v in manifest["graphs"][0]["inputs"] if v["kind"] == "user"]
    for t in (5, 21):
        ids = torch.randint(0, 500, (2, t))
        mask = torch.ones(2, t, dtype=torch.long)
        mask[0, -2:] = 0
        with torch.no_grad():
            ref = model.head(model.body(input_ids=ids, attention_mask=mask).last_hidden_state)
        inputs = {"L['input_ids']": ids, "L['attention_mask']": mask}
        got = built(*[inputs[n] for n in order])
        got = got[0] if isinstance(got, (tuple, list)) else got
        rel = ((got - ref).abs().max() / ref.abs().max()).item()
        assert got.shape == ref.shape and rel <= 1e-4, (t, rel)
