"""Importing dynoc changes nothing torch's own compiler does for code that
does not ask for dynoc: torch.compile on a transformers Llama (whose forward
slices `self.layers[:n]`, a new ModuleList each call) makes the same graphs
and recompiles with dynoc imported as without. dynoc's global module
registration hooks ran inside Dynamo's trace and made a counter of dynoc's a
guard that failed at every call: 4 graphs for 4 calls, where torch alone makes
1 (issue 52). Each side runs in its own process."""
import json
import subprocess
import sys

import pytest

from conftest import package_env


PROGRAM = """
import json, sys, torch, transformers
if sys.argv[1] == "dynoc":
    import dynoc
from torch._dynamo.utils import counters
cfg = transformers.LlamaConfig(vocab_size=1000, hidden_size=64, intermediate_size=128,
                               num_hidden_layers=2, num_attention_heads=4,
                               num_key_value_heads=2, max_position_embeddings=128)
torch.manual_seed(0)
model = transformers.LlamaForCausalLM(cfg).eval()
graphs = []
def backend(gm, example_inputs):
    graphs.append(sorted({getattr(n.target, "__name__", str(n.target))
                          for n in gm.graph.nodes if n.op == "call_function"}))
    return gm.forward
compiled = torch.compile(model, backend=backend)
outs = []
with torch.no_grad():
    for i in range(4):
        torch.manual_seed(i)
        ids = torch.randint(0, 1000, (1, 16))
        outs.append(compiled(ids, use_cache=False).logits.sum().item())
print(json.dumps({"graphs": graphs, "recompiles": sum(counters["recompiles"].values()),
                  "unique_graphs": counters["stats"]["unique_graphs"], "outs": outs}))
"""


def run(side, tmp_path):
    prog = tmp_path / "prog.py"
    prog.write_text(PROGRAM)
    p = subprocess.run([sys.executable, str(prog), side], capture_output=True, text=True,
                       env=package_env(), timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    return json.loads(p.stdout.strip().splitlines()[-1])


def test_importing_dynoc_leaves_torch_compile_of_a_llama_unchanged(tmp_path):
    pytest.importorskip("transformers")
    plain, with_dynoc = run("plain", tmp_path), run("dynoc", tmp_path)
    assert plain["unique_graphs"] == 1 and plain["recompiles"] == 0, plain
    assert with_dynoc["unique_graphs"] == plain["unique_graphs"], with_dynoc
    assert with_dynoc["recompiles"] == plain["recompiles"]
    assert with_dynoc["graphs"] == plain["graphs"]
    assert with_dynoc["outs"] == plain["outs"]
