"""dynoc.explain and dynoc.export: what capture makes of one call, like
torch._dynamo.explain and torch._dynamo.export."""
import collections

from .capture import session as _session
from .jit import fx as _fx
from ._api import compile as _compile
from .jit.compiled_module import CompiledModule
from ._errors import unsupported_type


ExportResult = collections.namedtuple("ExportResult", ["graph_module", "guards"])


class ExplainOutput:
    """Graph and break counts, ops, guards, break reasons and recompiles of the
    explained call; str() gives the same report `dynoc capture` prints."""

    def __init__(self, session):
        m = session.manifest()
        self.graph_count = len(m["graphs"])
        self.graph_break_count = len(m["breaks"])
        self.op_count = sum(sum(g["ops"].values()) for g in m["graphs"])
        self.ops_per_graph = [g["ops"] for g in m["graphs"]]
        self.guards = [g["guards"] for g in m["graphs"]]
        self.break_reasons = m["breaks"]
        self.recompiles = m["recompiles"]
        # Why calls of a variant would run eagerly, not compiled ({"entry",
        # "reason"} each): what the in-process warning says.
        self.eager_reasons = list(session.eager_reasons)
        self._report = session.report()

    def __str__(self):
        return self._report


def explain(fn, *, backend="eager"):
    """explain(fn)(*args, **kwargs) runs `fn` once as a capture region, in a
    session of its own (nothing is written), and returns an ExplainOutput."""

    def run(*args, **kwargs):
        session, _ = _record_once(_compile(fn, backend=backend), args, kwargs)
        return ExplainOutput(session)

    return run


def _record_once(compiled, args, kwargs):
    """Runs a fresh region once in a session of its own, recording only (no
    build); returns (the session, the region)."""
    region = compiled._dynoc_region if isinstance(compiled, CompiledModule) else compiled
    region.record_only = True
    saved = _session._current
    session = _session._current = _session.Session()
    try:
        compiled(*args, **kwargs)
    finally:
        _session._current = saved
    return session, region


def export(fn):
    """export(fn)(*args, **kwargs), like torch._dynamo.export: runs `fn` once
    (eagerly) as a capture region and returns ExportResult(graph_module,
    guards): the one graph as a torch.fx.GraphModule (dynoc's recording;
    called with the call's tensor arguments in order, it returns what `fn`
    returned, in its structure) and the guard texts. A break raises Unsupported naming
    it."""

    def run(*args, **kwargs):
        session, region = _record_once(_compile(fn, backend="eager"), args, kwargs)
        name = getattr(fn, "__qualname__", type(fn).__name__)
        if session.breaks:
            b = session.breaks[0]
            raise unsupported_type()(f"dynoc.export({name}): a graph break at {b['location']}: "
                              f"{b['reason']}")
        graphs = [g for g in session.graphs if g.kind == "forward"]
        if len(graphs) != 1:
            raise unsupported_type()(f"dynoc.export({name}): the call made {len(graphs)} graphs, "
                              "not one")
        try:
            gm, _ = _fx.graph_module(graphs[0], session.weights, graphs[0].output_structure)
        except _fx.NotConvertible as e:
            raise unsupported_type()(f"dynoc.export({name}): {e}")
        return ExportResult(gm, [g["text"] for g in region.variants[0]])

    return run
