"""A variant's compiled form: the one place that knows every form a captured
variant runs in (a graph built for inductor, one handed to another backend, a
training graph with its backward, a graph that resumes after a break) and why
a variant runs eagerly instead (NotCompiled)."""
import torch

from .built import BackendGraph, CompiledGraph, NotCompiled
from .training import TrainingGraph
from ..capture.resume import ResumePoint
from .resuming import ResumingGraph
from ..capture.values import _tensors


def _structure_problem(s):
    """Why the result structure `s` cannot be rebuilt from the graph's
    outputs, or None."""
    kind = s.get("type")
    if kind == "input_or_constant" and "source" not in s:
        return "it returns a tensor the graph did not compute (a constant)"
    if kind in ("opaque", "intermediate"):
        return f"it returns a {s.get('python_type', kind)} object"
    items = s.get("items", ())
    for item in (items.values() if isinstance(items, dict) else items):
        why = _structure_problem(item)
        if why:
            return why
    return None


def compile_variant(graphs, tracker, result, weights, sources, backend, L, G,
                    cuda_graphs=False):
    """A variant's calls, compiled: its graph built and loaded (with its
    backward graph when the result requires grad). `cuda_graphs`: a CUDA
    model replays its calls as CUDA graphs (mode="reduce-overhead"). Raises
    NotCompiled saying why they run eagerly instead."""
    if tracker.backward_error:
        raise NotCompiled(f"recording its backward failed: {tracker.backward_error}")
    if tracker.breaks:
        return _resuming_variant(graphs, tracker, weights, sources, backend, G)
    forward = [g for g in graphs if g.kind == "forward"]
    backward = [g for g in graphs if g.kind == "backward"]
    if len(forward) != 1 or len(backward) > 1:
        raise NotCompiled("no ATen op was recorded" if not graphs else
                          f"{len(forward)} forward and {len(backward)} backward graphs")
    if backward and not tracker.recorded_backward:
        raise NotCompiled("the region runs a backward pass itself")
    if not backward and any(t.requires_grad for t in _tensors(result)):
        raise NotCompiled("its result requires grad and no backward graph was recorded "
                          "(a backend other than inductor gets forward graphs only; with "
                          "inductor, no trained leaf tensor reached the result); under "
                          "torch.no_grad() it is compiled")
    lasting = tracker.lasting_writes()
    if lasting:
        raise NotCompiled(f"it writes {lasting[0]} (a Python side effect the "
                          "graph does not hold)")
    structure = next((g.output_structure for g in graphs
                      if (g.output_structure or {}).get("type") != "intermediate"),
                     {"type": "opaque"})
    why = _structure_problem(structure)
    if why:
        raise NotCompiled(why)
    used = {v.name: weights[v.name] for g in graphs for v in g.inputs if v.kind != "user"}
    if backward:
        trained = {g["input"] for g in backward[0].grads}
        for src, t in tracker.user_inputs:
            if t.requires_grad and src not in trained:
                raise NotCompiled(f"argument {src} requires grad but gets no gradient from "
                                  "the recorded backward (not a leaf tensor)")
        return TrainingGraph(forward[0], backward[0], used, sources, cuda_graphs)
    if backend == "inductor":
        root = L.get("self")
        return CompiledGraph(forward[0], used, sources, cuda_graphs,
                             root if isinstance(root, torch.nn.Module) else None)
    return BackendGraph(forward[0], used, backend, L, G)


def _resuming_variant(graphs, tracker, weights, sources, backend, G):
    """A variant with graph breaks: its graph before the first break, the
    breaking call and a resume function (jit/resuming.py), or NotCompiled."""
    b = tracker.breaks[0]
    where = f"{len(tracker.breaks)} graph break(s), the first at {b['location']} ({b['reason']})"
    point = tracker.resume_point
    if backend != "inductor":
        raise NotCompiled(f"{where}: a backend other than inductor runs regions with breaks "
                          "eagerly")
    if not isinstance(point, ResumePoint):
        raise NotCompiled(f"{where}: it cannot be resumed after: {point or 'no snapshot'}")
    if any(g.kind == "backward" for g in graphs):
        raise NotCompiled(f"{where}: the region runs a backward pass itself")
    if point.graph is not None and point.graph not in graphs:
        raise NotCompiled(f"{where}: its first graph was folded into another")
    used = {v.name: weights[v.name] for v in (point.graph.inputs if point.graph else ())
            if v.kind != "user"}
    return ResumingGraph(point, used, sources, tracker.region, G)
