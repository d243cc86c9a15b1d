"""Running a variant whose region breaks (docs/capture.md, "Graph breaks in
the same process"): the built graph before the break, the breaking call
natively, then the resume function (capture's half is capture/resume.py)."""
from .built import STALE, BuiltGraph, counters
from ..capture.resume import _NULL, call_on_stack, prefix_graph, rebuild, resume_function


class ResumingGraph:
    """A compiled variant whose region breaks: called with the region's L and
    G, it runs the built graph before the break, the breaking call natively
    and the resume function (a region of its own), and returns its result."""

    def __init__(self, point, weights, sources, region, G):
        self.point = point
        prefix = prefix_graph(point)
        self.built = BuiltGraph(prefix, weights, sources, region.cuda_graphs) \
            if prefix.nodes else None
        self.region, self.G = region, G
        self.resumes = {}  # instruction -> the region resuming there
        self.own_calls = 0

    def _resume(self, at):
        """The region of the resume function entering at `at` (made on the
        first call that goes there: after a jump, one per way it went)."""
        r = self.resumes.get(at)
        if r is None:
            r = self.resumes[at] = self.region.resume_region(
                resume_function(self.point, self.G, at))
        return r

    @property
    def calls(self):
        """Calls that ran built code: this part's and the resume functions'."""
        return self.own_calls + sum(r.compiled_calls() for r in self.resumes.values())

    def __call__(self, L, G):
        outputs = ()
        if self.built is not None:
            if self.built.stale(L, G) or self.built.refresh_weights():
                return STALE
            outputs = self.built.run(*self.built.inputs(L, G))
        self.own_calls += 1
        counters["compiled_calls"] += 1
        p = self.point
        stack = [rebuild(r, outputs, L, G) for r in p.stack]
        locals_ = [None if r == ("unbound",) else rebuild(r, outputs, L, G) for r in p.locals]
        if p.condition is not None:  # the jump, natively (a tensor's truth)
            taken = bool(rebuild(p.condition, outputs, L, G)) == p.jump_if_true
            return self._resume(p.target if taken else p.next)(
                *locals_, *[v for v in stack if v is not _NULL])
        below, result = call_on_stack(stack, p.nargs, p.kwnames)
        return self._resume(p.next)(*locals_, *[v for v in below if v is not _NULL], result)
