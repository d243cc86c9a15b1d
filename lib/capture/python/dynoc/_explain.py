"""dynoc.explain: what capture makes of one call, like torch._dynamo.explain."""
from . import _session


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
        self._report = session.report()

    def __str__(self):
        return self._report


def explain(fn, *, backend="eager"):
    """explain(fn)(*args, **kwargs) runs `fn` once as a capture region, in a
    session of its own (nothing is written), and returns an ExplainOutput."""
    from . import compile as _compile

    def run(*args, **kwargs):
        saved = _session._current
        session = _session._current = _session.Session()
        try:
            _compile(fn, backend=backend)(*args, **kwargs)
        finally:
            _session._current = saved
        return ExplainOutput(session)

    return run
