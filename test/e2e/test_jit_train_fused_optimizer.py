"""A compiled model trained by an optimizer outside the region, as
transformers' Trainer(torch_compile=True) does: the built forward (and its
backward) run every step after the first, and torch's fused optimizers, which
write the parameters without moving their version counters, still reach what
the built graph precomputed from them (jit/built.py, `_after_optimizer_step`).
Losses are eager's."""
import copy
import json
import subprocess
import sys
import textwrap

import pytest
import torch

transformers = pytest.importorskip("transformers")


def _tiny_bert():
    torch.manual_seed(0)
    cfg = transformers.BertConfig(vocab_size=200, hidden_size=64, num_hidden_layers=2,
                                  num_attention_heads=4, intermediate_size=128,
                                  max_position_embeddings=64, num_labels=3,
                                  hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    return transformers.BertForSequenceClassification(cfg)


# On the GPU machine (tools/gpu_jit.sh run -m pytest FILE) on CUDA too.
DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("fused", [True, False])
def test_optimizer_steps_reach_the_built_graph(fused, device):
    import dynoc
    eager = _tiny_bert().to(device)
    model = copy.deepcopy(eager)
    compiled = dynoc.compile(model)
    g = torch.Generator().manual_seed(1)
    batches = [(torch.randint(0, 200, (8, 16), generator=g).to(device),
                torch.randint(0, 3, (8,), generator=g).to(device)) for _ in range(5)]
    opts = [torch.optim.AdamW(m.parameters(), lr=1e-3, weight_decay=0.01, fused=fused)
            for m in (eager, model)]
    before = dynoc.counters["compiled_calls"]
    want, got = [], []
    for ids, y in batches:
        for m, opt, out in ((eager, opts[0], want), (compiled, opts[1], got)):
            loss = m(input_ids=ids, labels=y).loss
            loss.backward()
            opt.step()
            opt.zero_grad()
            out.append(loss.item())
    assert dynoc.counters["compiled_calls"] - before == 4  # calls 2..5
    # (on CUDA, TF32 is off by default for matmuls; kernels differ in order)
    torch.testing.assert_close(got, want, rtol=1e-5 if device == "cpu" else 1e-4, atol=0)


TRAINER = """
import sys, torch, transformers
torch.manual_seed(0)
cfg = transformers.BertConfig(vocab_size=200, hidden_size=64, num_hidden_layers=2,
                              num_attention_heads=4, intermediate_size=128,
                              max_position_embeddings=64, num_labels=3,
                              hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
model = transformers.BertForSequenceClassification(cfg)

class Data(torch.utils.data.Dataset):
    def __init__(self):
        g = torch.Generator().manual_seed(1)
        self.ids = torch.randint(0, 200, (64, 16), generator=g)
        self.y = torch.randint(0, 3, (64,), generator=g)
    def __len__(self):
        return 64
    def __getitem__(self, i):
        return {"input_ids": self.ids[i], "labels": self.y[i]}

args = transformers.TrainingArguments(
    output_dir=sys.argv[1], torch_compile=len(sys.argv) > 2, max_steps=8,
    per_device_train_batch_size=8, report_to=[], use_cpu=True, logging_steps=1,
    save_strategy="no", learning_rate=1e-3, seed=0, disable_tqdm=True)
trainer = transformers.Trainer(model=model, args=args, train_dataset=Data())
trainer.train()
result = {"losses": [h["loss"] for h in trainer.state.log_history if "loss" in h],
          "fused": trainer.optimizer.defaults.get("fused")}
if "dynoc" in sys.modules:
    import dynoc
    result["counters"] = dict(dynoc.counters)
print("RESULT", json.dumps(result))
""".replace("import sys,", "import json, sys,")


def test_trainer_with_torch_compile_runs_built_code_with_eager_losses(tmp_path):
    pytest.importorskip("accelerate")
    from conftest import package_env
    script = tmp_path / "train.py"
    script.write_text(textwrap.dedent(TRAINER))

    def run(*extra, **env):
        p = subprocess.run([sys.executable, script, tmp_path / "out", *extra],
                           capture_output=True, text=True, env={**package_env(), **env})
        assert p.returncode == 0, p.stderr[-3000:]
        line = [x for x in p.stdout.splitlines() if x.startswith("RESULT ")][-1]
        return json.loads(line[len("RESULT "):])
    eager = run()
    compiled = run("--compile", DYNOC_TORCH_COMPILE="1")
    assert compiled["fused"]  # the Trainer's default AdamW: torch's fused kernel
    assert compiled["counters"]["compiled_calls"] >= 7, compiled  # every step but the first
    assert compiled["counters"]["eager_variants"] == 0
    assert compiled["losses"] == pytest.approx(eager["losses"], rel=1e-4)
