"""A capture session: every region's graphs, breaks and recompiles, and writing
them out (docs/capture.md describes the output directory)."""
import json
import os
import sys
import traceback

import torch

from . import mlir_writer as mw
from .. import _native
from . import optim_rules as _optim_rules, partition as _partition
from .._version import __version__

MANIFEST_VERSION = 1
WEIGHTS_FILE = "weights.safetensors"


def _dynoc_version():
    return __version__


class Session:
    def __init__(self, out_dir=None, backend="eager", script=None):
        self.out_dir = out_dir
        self.backend = backend
        self.script = script
        self.graphs = []
        self.breaks = []
        self.recompiles = []
        self.weights = {}   # name -> tensor (parameters, buffers, constants)
        self._weight_names = {}  # id(tensor) -> its name, for add_weight
        self.constant_sources = {}  # constant's name -> the source it was read from
        self.steps = []     # training step graphs (capture/step.py), one per training call
        self.step_refusals = []  # {"entry", "reason"}: training calls with no step graph
        # Entries whose results require grad with no backward graph recorded:
        # the backward called outside the region runs in eager PyTorch.
        self.eager_backward = []
        # In process (jit/built.py): {"entry", "reason"} of each variant whose
        # calls run eagerly rather than compiled.
        self.eager_reasons = []
        self._graph_count = 0

    def next_graph_name(self):
        name = f"graph_{self._graph_count}"
        self._graph_count += 1
        return name

    def add_weight(self, name, tensor):
        """Registers a parameter/buffer; returns the (session-unique) name.
        A tensor registered before keeps its first name: a parameter reached
        once without a source (`_parameter_N`) and once through one is one
        weight, which a training step reads and writes under one name."""
        known = self._weight_names.get(id(tensor))
        if known is not None and self.weights.get(known) is tensor:
            return known
        base, k = name, 1
        while name in self.weights and self.weights[name] is not tensor:
            name = f"{base}_{k}"
            k += 1
        self.weights[name] = tensor
        self._weight_names[id(tensor)] = name
        return name

    def add_constant(self, name, tensor):
        """Registers a constant tensor; returns its session-unique name (the
        same source in two variants may hold different values)."""
        base, k = name, 1
        while name in self.weights:
            name = f"{base}_{k}"
            k += 1
        self.weights[name] = tensor.detach()
        self.constant_sources[name] = base
        return name

    def user_location(self):
        """file:line of the innermost frame of user code on the Python stack."""
        C = _native.loaded()
        if C is not None:
            loc = C.current_location()
            if loc is not None:
                return f"{loc[0]}:{loc[1]}"
        here = os.path.dirname(os.path.dirname(__file__))  # the package
        for fs in reversed(traceback.extract_stack()):
            if not fs.filename.startswith(here) and "/torch/" not in fs.filename:
                return f"{fs.filename}:{fs.lineno}"
        return "<unknown>"

    # --- output ------------------------------------------------------------
    def report(self):
        ops = sum(len(g.nodes) for g in self.graphs)
        recorded = sum(g.runs for g in self.graphs)
        folded = f" ({recorded} recorded, repeats folded)" if recorded > len(self.graphs) else ""
        backward = [g for g in self.graphs if g.kind == "backward"]
        forward = len(self.graphs) - len(backward)
        lines = ["dynoc capture report",
                 f"  graphs: {forward}{folded}" +
                 (f" (+ {len(backward)} backward)" if backward else ""),
                 f"  graph breaks: {len(self.breaks)}",
                 f"  ops: {ops}",
                 f"  recompiles: {len(self.recompiles)}"]
        for g in self.graphs:
            runs = ""
            if g.runs > 1:
                last = f" ... {g.folded[-1]}" if len(g.folded) > 1 else ""
                runs = f", runs {g.runs} times (identical bodies folded: {g.folded[0]}{last})"
            extra = ""
            if g.kind == "backward":
                count, size = _partition.saved_bytes(g, self.graphs)
                moved = sum(g.recomputed.values())
                extra = (f", backward: {len(g.grads)} gradients, saves {count} values "
                         f"({size} bytes), {moved} recomputed")
            lines.append(f"  {g.name} ({g.entry}): {len(g.nodes)} ops, "
                         f"{len(g.guards)} guards{runs}{extra}")
        if self.breaks:
            lines.append("  break reasons:")
            # A loop breaks at the same place each iteration: one line, counted.
            counts = {}
            for b in self.breaks:
                key = (b["location"], b["reason"])
                counts[key] = counts.get(key, 0) + 1
            for (location, reason), n in counts.items():
                times = f" (x{n})" if n > 1 else ""
                lines.append(f"    {location}: {reason}{times}")
        for st in self.steps:
            loop = getattr(st, "loop", None)
            counted = loop and loop.get("recorded", loop["iterations"]) < loop["iterations"]
            times = (f"{loop['iterations']} iterations, {loop['recorded']} recorded and the "
                     "rest counted" if counted else f"{loop['iterations']} iterations recorded") \
                if loop else ""
            of = (f" (the loop's {loop['forward']}, {loop['backward']} and {loop['update']}, "
                  f"{times})" if loop else "")
            lines.append(f"  training step {st.name} ({st.entry}){of}: {len(st.nodes)} ops, "
                         f"writes back {len(st.mutations)} weights; "
                         f"dynoc build {st.name}.mlir makes one step per call")
        for r in self.step_refusals:
            lines.append(f"  no training step graph for {r['entry']}: {r['reason']}")
        for r in self.recompiles:
            lines.append(f"  recompile of {r['entry']}: guard failed: {r['guard']}")
        for entry in self.eager_backward:
            lines.append(f"  eager backward: {entry} returns tensors that require grad; their "
                         "backward, called outside the region, and an optimizer step outside "
                         "every region ran in eager PyTorch, in no graph (docs/training.md)")
        for r in self.eager_reasons:
            lines.append(f"  runs eagerly in process: {r['entry']}: {r['reason']}")
        return "\n".join(lines) + "\n"

    def manifest(self):
        def tensor_desc(v):
            return {"kind": v.kind, "name": v.name, "dtype": str(v.dtype).replace("torch.", ""),
                    "shape": list(v.shape)}
        return {
            "format": "dynoc-capture",
            "version": MANIFEST_VERSION,
            "dynoc_version": _dynoc_version(),
            "script": self.script,
            "backend": self.backend,
            "weights": WEIGHTS_FILE if self._used_weights() else None,
            "graphs": [{
                "name": g.name,
                "entry": g.entry,
                "mlir": f"{g.name}.mlir",
                "ops": g.op_counts(),
                "guards": [x["text"] for x in g.guards],
                "inputs": [tensor_desc(v) for v in g.inputs],
                "outputs": [{"dtype": str(v.dtype).replace("torch.", ""), "shape": list(v.shape)}
                            for v in g.outputs],
                "output_structure": g.output_structure,
                "mutations": g.mutations,
                "runs": g.runs,
                "counted": g.counted,
                "folded": g.folded,
                "kind": g.kind,
                **(self._backward_fields(g) if g.kind == "backward" else {}),
            } for g in self.graphs],
            "steps": [{
                "name": st.name,
                "entry": st.entry,
                "mlir": f"{st.name}.mlir",
                "ops": st.op_counts(),
                "inputs": [tensor_desc(v) for v in st.inputs],
                "output_structure": st.output_structure,
                "mutations": st.mutations,
                **({"loop": st.loop} if getattr(st, "loop", None) else {}),
            } for st in self.steps],
            "step_refusals": self.step_refusals,
            "breaks": self.breaks,
            "recompiles": self.recompiles,
        }

    def _backward_fields(self, g):
        """What a backward graph reads from its forward graphs and gives back."""
        count, size = _partition.saved_bytes(g, self.graphs)
        forward = sorted({v.name.split(".", 1)[0] for v in g.inputs if v.kind == "user"
                          and v.name.startswith("graph_") and ".output_" in v.name})
        return {"forward": forward, "grads": g.grads,
                "saved": {"values": count, "bytes": size},
                "recomputed": dict(sorted(g.recomputed.items()))}

    def _used_weights(self):
        return {v.name for g in self.graphs + self.steps for v in g.inputs if v.kind != "user"}

    def write(self):
        """Writes every graph, the weights, manifest.json and report.txt; prints
        the report on stderr. Each file goes to a temporary name first and is
        renamed into place, so a capture killed at any moment leaves every
        file under its final name whole (the old one or the new one)."""
        if self.out_dir is None:
            return
        os.makedirs(self.out_dir, exist_ok=True)
        out = lambda name: os.path.join(self.out_dir, name)
        for g in self.graphs + self.steps:
            text = mw.write_module([g], WEIGHTS_FILE)
            _write_atomically(out(f"{g.name}.mlir"), lambda p: _write_text(p, text))
        for g in self.graphs:
            if g.examples is not None:
                from safetensors.torch import save_file
                examples = {k: v.contiguous() for k, v in g.examples.items()}
                _write_atomically(out(f"{g.name}.examples.safetensors"),
                                  lambda p: save_file(examples, p))
        used = self._used_weights()
        if used:
            from safetensors.torch import save_file
            _optim_rules.refresh_all()  # learning rates as the script left them
            tensors = {n: self.weights[n].detach().contiguous().clone() for n in sorted(used)}
            _write_atomically(out(WEIGHTS_FILE), lambda p: save_file(tensors, p))
        manifest = json.dumps(self.manifest(), indent=1)
        _write_atomically(out("manifest.json"), lambda p: _write_text(p, manifest))
        report = self.report()
        _write_atomically(out("report.txt"), lambda p: _write_text(p, report))
        if not os.environ.get("DYNOC_NO_REPORT"):  # `dynoc explain` prints it
            sys.stderr.write(report)


def _write_text(path, text):
    with open(path, "w") as f:
        f.write(text)


def _write_atomically(path, write):
    """Calls write(tmp) for a temporary name beside `path`, then renames it to
    `path`; on failure the temporary file is removed."""
    tmp = f"{path}.tmp{os.getpid()}"
    try:
        write(tmp)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


_current = None


def current():
    """The active session (`dynoc capture`), or an in-memory one."""
    global _current
    if _current is None:
        _current = Session()
    return _current


def start(out_dir, backend, script):
    global _current
    _current = Session(out_dir, backend, script)
    return _current
