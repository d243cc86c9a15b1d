"""Folds graphs with identical bodies into one graph that runs several times.

A whole-script region unrolls a module-level loop: a training loop of 758 steps
records 758 copies of the same step, differing only in which earlier graph
their inputs came from. Such copies are one graph with a run count
(docs/capture.md, "Repeated graphs"): the first keeps its name, later ones are
dropped, and inputs that named a dropped graph's outputs name the kept graph's
("the output of its latest run").
"""
import hashlib
import json
import re

import torch

from . import mlir_writer as mw


def _constant_key(t):
    """A constant by its value: a loop makes its number constants again each
    iteration (SGD's momentum as a 0-d tensor), under new names."""
    t = t.detach().cpu().contiguous()
    digest = hashlib.sha1(t.view(-1).view(torch.uint8).numpy().tobytes()).hexdigest()
    return f"constant {t.dtype} {list(t.shape)} {digest}"


def _body_key(g, weights):
    """The graph's MLIR with everything that only says where values came from
    (its own name, the provenance names of its user inputs, the names of its
    constants) made positional or by value: two graphs with equal keys compute
    the same thing from the same weights."""
    saved = (g.name, [v.name for v in g.inputs], g.mutations)
    user = {}
    for i, v in enumerate(g.inputs):
        if v.kind == "user":
            user.setdefault(v.name, f"user_input_{i}")
            v.name = f"user_input_{i}"
        elif v.kind == "constant" and isinstance(weights.get(v.name), torch.Tensor):
            v.name = _constant_key(weights[v.name])
    g.name = "repeated_graph"
    g.mutations = [{**m, "input": user.get(m["input"], m["input"])} for m in saved[2]]
    try:
        text = mw.write_module([g], "weights")
    except mw.Unencodable:
        text = None  # the writer reports it later; such a graph never folds
    finally:
        g.name, names, g.mutations = saved
        for v, name in zip(g.inputs, names):
            v.name = name
    if text is None:
        return None
    return text + json.dumps(g.output_structure, sort_keys=True)


def body_key(g, weights):
    """What two graphs of equal bodies share (their guards aside), or None."""
    saved, g.guards = g.guards, []
    try:
        return _body_key(g, weights)
    finally:
        g.guards = saved


def first_difference(a, b, weights):
    """The first line of `a`'s body that `b`'s does not have (what keeps two
    iterations' graphs apart, for a message), or None."""
    ka, kb = _body_key(a, weights), _body_key(b, weights)
    if ka is None or kb is None:
        return None
    # The ops first (the signature's line holds the guards too), then guards.
    for la, lb in zip(ka.splitlines()[2:], kb.splitlines()[2:]):
        if la != lb:
            return la.strip()
    theirs = {gd["text"] for gd in b.guards}
    return next((f"the guard {gd['text']}" for gd in a.guards if gd["text"] not in theirs),
                None)


def _rename(name, folded):
    """`graph_7.output_0` (or `grad(graph_7.output_0)`, a backward graph's
    seed) with a folded graph's name replaced by the kept one's."""
    return re.sub(r"\b(graph_\d+)(?=\.)", lambda m: folded.get(m.group(1), m.group(1)), name)


def _rename_structure(s, folded):
    if isinstance(s, dict):
        if s.get("type") == "tensor" and s.get("graph") in folded:
            s = {**s, "graph": folded[s["graph"]]}
        return {k: _rename_structure(v, folded) if k == "items" else v for k, v in s.items()}
    if isinstance(s, list):
        return [_rename_structure(x, folded) for x in s]
    return s


def fold(graphs, weights=None):
    """Returns `graphs` with each repeated body kept once (first occurrence,
    in order); the kept graph's `runs` counts its occurrences and `folded`
    names the graphs it stands for."""
    kept, by_key, folded = [], {}, {}
    for g in graphs:
        for v in g.inputs:
            if v.kind == "user" and v.name:
                v.name = _rename(v.name, folded)
        g.mutations = [{**m, "input": _rename(m["input"], folded)} for m in g.mutations]
        g.output_structure = _rename_structure(g.output_structure, folded)
        key = _body_key(g, weights or {})
        first = by_key.get(key) if key is not None else None
        if first is None:
            if key is not None:
                by_key[key] = g
            kept.append(g)
            continue
        first.runs += 1
        first.counted += g.counted
        first.folded.append(g.name)
        first.latest_inputs = [v.name for v in g.inputs]
        first.latest_mutations = g.mutations
        first.ran_outside += [r for r in g.ran_outside if r not in first.ran_outside]
        folded[g.name] = first.name
    return kept
