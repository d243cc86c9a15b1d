"""Layers that real training scripts use, captured from a program and built:
LSTM (mkldnn_rnn_layer), LSTMCell, transposed convolution, cross-entropy
(nll_loss_forward), leaky ReLU, arange(start, end, step), f64 linear layers,
grouped, depthwise and dilated convolutions with ReLU6,
each against eager on the program's own inputs (DYNOC_SAVE_EXAMPLES); and the
random ops (dropout's bernoulli, uniform, normal), which match eager in
distribution only."""
import os
import pathlib
import subprocess
import sys
import textwrap

import pytest
import torch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))
from conftest import DYNOC  # noqa: E402
from graph_check import check_graphs  # noqa: E402


def capture(tmp_path, body):
    """Captures a program (torch.compile regions) and returns (out dir, manifest graphs)."""
    import json
    prog = tmp_path / "prog.py"
    prog.write_text("import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"
                    "torch.manual_seed(0)\n" + textwrap.dedent(body))
    out = tmp_path / "out"
    p = subprocess.run([DYNOC, "capture", "-o", str(out), str(prog)], capture_output=True,
                       text=True, env=dict(os.environ, DYNOC_SAVE_EXAMPLES="1"))
    assert p.returncode == 0, p.stderr
    manifest = json.loads((out / "manifest.json").read_text())
    return out, manifest


LAYERS = {
    "lstm_2layer_bidirectional": """
        lstm = nn.LSTM(6, 8, num_layers=2, bidirectional=True, batch_first=True)
        f = torch.compile(lambda x: lstm(x))
        with torch.no_grad():
            f(torch.randn(3, 7, 6))
    """,
    "lstm_time_major_with_state": """
        lstm = nn.LSTM(5, 4)
        f = torch.compile(lambda x, h, c: lstm(x, (h, c)))
        with torch.no_grad():
            f(torch.randn(6, 2, 5), torch.randn(1, 2, 4), torch.randn(1, 2, 4))
    """,
    "lstm_cell_loop": """
        cell = nn.LSTMCell(5, 4)
        @torch.compile
        def f(x, h, c):
            for t in range(x.size(0)):
                h, c = cell(x[t], (h, c))
            return h, c
        with torch.no_grad():
            f(torch.randn(4, 2, 5), torch.zeros(2, 4), torch.zeros(2, 4))
    """,
    "conv_transpose_stride_pad_outpad": """
        up = nn.ConvTranspose2d(3, 5, 3, stride=2, padding=1, output_padding=1)
        f = torch.compile(up)
        with torch.no_grad():
            f(torch.randn(2, 3, 6, 5))
    """,
    "conv_transpose_groups_dilation": """
        up = nn.ConvTranspose2d(4, 6, (3, 2), stride=(1, 2), dilation=2, groups=2, bias=False)
        f = torch.compile(up)
        with torch.no_grad():
            f(torch.randn(1, 4, 5, 4))
    """,
    "cross_entropy_reductions": """
        @torch.compile
        def f(logits, y, w):
            return (F.cross_entropy(logits, y), F.cross_entropy(logits, y, reduction="sum"),
                    F.cross_entropy(logits, y, reduction="none", ignore_index=2),
                    F.cross_entropy(logits, y, weight=w))
        f(torch.randn(6, 4), torch.tensor([0, 1, 2, 3, 2, 1]), torch.rand(4))
    """,
    "leaky_relu_arange_f64_linear": """
        lin = nn.Linear(5, 3).double()
        @torch.compile
        def f(x):
            pos = torch.arange(2, 12, 2)
            return F.leaky_relu(lin(x), 0.1), pos * 3
        with torch.no_grad():
            f(torch.randn(4, 5, dtype=torch.float64))
    """,
    "grouped_depthwise_dilated_conv_relu6": """
        # ResNeXt's grouped 3x3, MobileNet's depthwise 3x3 (strided, and not)
        # with ReLU6 (hardtanh), 1x1s, a dilated convolution: oneDNN's grouped
        # and dilated primitives, dynoc's own 1x1 and depthwise kernels.
        class Block(nn.Module):
            def __init__(self):
                super().__init__()
                self.grouped = nn.Conv2d(64, 64, 3, padding=1, groups=32)
                self.depthwise = nn.Conv2d(64, 64, 3, stride=2, padding=1, groups=64, bias=False)
                self.dilated = nn.Conv2d(64, 16, 3, padding=2, dilation=2)
                self.expand = nn.Conv2d(64, 96, 1)
                self.dw = nn.Conv2d(96, 96, 3, padding=1, groups=96, bias=False)
                self.project = nn.Conv2d(96, 64, 1, bias=False)
            def forward(self, x):
                y = F.relu6(self.depthwise(torch.relu(self.grouped(x))))
                z = y + self.project(F.relu6(self.dw(F.relu6(self.expand(y)))))
                return self.dilated(y), F.hardtanh(y, -0.5, 2.0), z
        f = torch.compile(Block().eval())
        with torch.no_grad():
            f(torch.randn(2, 64, 15, 13))
    """,
}


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_layer_builds_and_matches_eager(name, tmp_path):
    out, manifest = capture(tmp_path, LAYERS[name])
    assert manifest["graphs"] and not manifest["breaks"], manifest["breaks"]
    for r in check_graphs(out, manifest["graphs"]):
        assert r.built, r.error
        assert r.compared and r.max_err <= 1e-4, (r.name, r.max_err)


def test_random_ops_match_eager_in_distribution(tmp_path):
    """Dropout in training mode, uniform_ and normal_ fills, built: the kept
    fraction, the scaling of kept elements and the fills' moments are eager's
    (within sampling error), and two calls draw different numbers."""
    import dynoc
    out, manifest = capture(tmp_path, """
        drop = nn.Dropout(0.3)
        @torch.compile
        def f(x):
            u = torch.empty(x.shape).uniform_(-2.0, 4.0)
            n = torch.empty(x.shape).normal_(1.5, 0.5)
            return drop(x), u, n
        f(torch.ones(200, 100))
    """)
    (g,) = manifest["graphs"]
    assert {"aten.bernoulli.p", "aten.uniform", "aten.normal_functional"} <= set(g["ops"])
    so = out / "graph_0.so"
    b = subprocess.run([DYNOC, "build", str(out / g["mlir"]), "-o", str(so)],
                       capture_output=True, text=True)
    assert b.returncode == 0, b.stderr
    model = dynoc.load(str(so))
    x = torch.ones(200, 100)
    d1, u, n = model(x)
    d2, _, _ = model(x)
    kept = d1 != 0
    assert abs(kept.float().mean().item() - 0.7) < 0.02
    assert torch.allclose(d1[kept], torch.full_like(d1[kept], 1 / 0.7))
    assert not torch.equal(d1, d2)
    assert u.min() >= -2.0 and u.max() < 4.0 and abs(u.mean().item() - 1.0) < 0.05
    assert abs(n.mean().item() - 1.5) < 0.02 and abs(n.std().item() - 0.5) < 0.02
