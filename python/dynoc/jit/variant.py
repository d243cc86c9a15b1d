"""A variant's compiled form: the one place that knows every form a captured
variant runs in (a graph built for inductor, one handed to another backend, a
training graph with its backward, a graph that resumes after a break) and why
a variant runs eagerly instead (NotCompiled)."""
import torch

from .built import BackendGraph, CompiledGraph, NotCompiled
from .training import TrainingGraph
from .training_step import TrainingStep
from ..capture.resume import ResumePoint
from .resuming import ResumingGraph
from ..capture import results
from ..capture.values import _tensors
from .side_effects import SideEffects


def compile_variant(graphs, tracker, result, weights, sources, backend, L, G,
                    cuda_graphs=False, build=True):
    """A variant's calls, compiled: its graph built and loaded (with its
    backward graph when the result requires grad). `cuda_graphs`: a CUDA
    model replays its calls as CUDA graphs (mode="reduce-overhead"). Raises
    NotCompiled saying why they run eagerly instead. build=False: only the
    checks, nothing built (dynoc.explain); returns None."""
    if tracker.backward_error:
        raise NotCompiled(f"recording its backward failed: {tracker.backward_error}")
    if not tracker.recorded_backward and any(g.kind == "backward" for g in graphs):
        return _training_step(graphs, tracker, result, weights, sources, backend,
                              cuda_graphs, build)
    if tracker.breaks:
        return _resuming_variant(graphs, tracker, weights, sources, backend, G, build)
    forward = [g for g in graphs if g.kind == "forward"]
    backward = [g for g in graphs if g.kind == "backward"]
    if len(forward) != 1 or len(backward) > 1:
        why = "no ATen op was recorded" if not graphs else \
            f"{len(forward)} forward and {len(backward)} backward graphs"
        if len(backward) > 1 and tracker.backward_breaks:
            why += f": the backward breaks at {tracker.backward_breaks[0]}"
        raise NotCompiled(why)
    if backward and not tracker.recorded_backward:
        raise NotCompiled("the region runs a backward pass itself")
    if not backward and any(t.requires_grad for t in _tensors(result)):
        raise NotCompiled("its result requires grad and no backward graph was recorded "
                          "(a backend other than inductor gets forward graphs only; with "
                          "inductor, no trained leaf tensor reached the result); under "
                          "torch.no_grad() it is compiled")
    if tracker.unreplayable:
        raise NotCompiled(f"{tracker.unreplayable[0]} (a Python side effect dynoc cannot "
                          "replay)")
    for e in tracker.side_effects:
        if "call" in e:  # a container method, its arguments checked at capture
            continue
        why = "its value is not readable" if e["value"] is None else \
            results.problem(e["value"]) or \
            (not e.get("constant") and not e.get("size") and
             results.python_scalar(e["value"]) and
             f"its value holds a Python {results.python_scalar(e['value'])} the call computed")
        if why:
            raise NotCompiled(f"it writes {e['target']}, a Python side effect dynoc cannot "
                              f"replay ({why})")
    structure = next((g.output_structure for g in graphs
                      if (g.output_structure or {}).get("type") != "intermediate"),
                     {"type": "opaque"})
    why = results.problem(structure)
    if why:
        raise NotCompiled(f"it returns {why}")
    used = {v.name: weights[v.name] for g in graphs for v in g.inputs if v.kind != "user"}
    if backward:
        trained = {g["input"] for g in backward[0].grads}
        for src, t in tracker.user_inputs:
            if t.requires_grad and src not in trained:
                if tracker.backward_breaks:  # an op of the backward no graph holds
                    raise NotCompiled(f"argument {src} gets no gradient from the recorded "
                                      f"backward: it breaks at {tracker.backward_breaks[0]}")
                raise NotCompiled(f"argument {src} requires grad but gets no gradient from "
                                  "the recorded backward (not a leaf tensor)")
        _no_side_effects(tracker, "a training step")
        if not build:
            return None
        return TrainingGraph(forward[0], backward[0], used, sources, cuda_graphs)
    if backend != "inductor":
        _no_side_effects(tracker, "a backend other than inductor")
    if not build:
        return None
    if backend == "inductor":
        root = L.get("self")
        return CompiledGraph(forward[0], used, sources, cuda_graphs,
                             root if isinstance(root, torch.nn.Module) else None,
                             SideEffects(tracker.side_effects), tracker.python_refs)
    return BackendGraph(forward[0], used, backend, L, G)


def _training_step(graphs, tracker, result, weights, sources, backend, cuda_graphs, build):
    """A region that runs the program's own backward pass and an update
    after it: its graphs as one step (jit/training_step.py), or NotCompiled."""
    if backend != "inductor":
        raise NotCompiled("it runs a backward pass, and a backend other than inductor "
                          "gets forward graphs only")
    if tracker.unreplayable:
        raise NotCompiled(f"{tracker.unreplayable[0]} (a Python side effect dynoc cannot "
                          "replay)")
    _no_side_effects(tracker, "a training step")
    why = results.problem(graphs[-1].output_structure or {"type": "opaque"})
    if why:
        raise NotCompiled(f"it returns {why}")
    if not build:
        return None
    return TrainingStep(graphs, tracker, weights, sources, cuda_graphs)


def _no_side_effects(tracker, form):
    """The compiled forms that do not replay side effects yet (NotCompiled)."""
    if tracker.side_effects:
        raise NotCompiled(f"it writes {tracker.side_effects[0]['target']} (a Python side "
                          f"effect; {form} does not replay side effects yet)")


def _resuming_variant(graphs, tracker, weights, sources, backend, G, build=True):
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
    if tracker.storage_reads:
        raise NotCompiled(f"{where}: as_strided at {tracker.storage_reads[0]} addresses "
                          "storage, and a graph before a break hands on dense copies of "
                          "views")
    if tracker.unreplayable:
        raise NotCompiled(f"{where}: {tracker.unreplayable[0]} (a Python side effect dynoc "
                          "cannot replay)")
    before = [e["target"] for e in tracker.side_effects
              if tracker.written_after_breaks.get(e["target"], 0) == 0]
    if before:  # the resume function's own region replays those after the break
        raise NotCompiled(f"{where}: it writes {before[0]} before the break (a Python side "
                          "effect; a variant that resumes does not replay those yet)")
    if point.graph is not None and point.graph not in graphs:
        raise NotCompiled(f"{where}: its first graph was folded into another")
    if not build:
        return None
    used = {v.name: weights[v.name] for v in (point.graph.inputs if point.graph else ())
            if v.kind != "user"}
    return ResumingGraph(point, used, sources, tracker.region, G)
