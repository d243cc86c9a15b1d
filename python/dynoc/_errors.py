"""dynoc's error types that capture raises (a leaf, as torch/_dynamo/exc.py)."""

_unsupported = None


def unsupported_type():
    """dynoc.Unsupported: what dynoc cannot make one graph of (a break in a
    fullgraph=True region, export of a region that breaks). A subclass of
    torch._dynamo.exc.Unsupported, so `except` clauses written for Dynamo
    catch it; made on first use, as importing torch._dynamo takes a second."""
    global _unsupported
    if _unsupported is None:
        import torch._dynamo.exc

        class Unsupported(torch._dynamo.exc.Unsupported):
            def __init__(self, msg):
                super().__init__(msg, "dynoc")

        Unsupported.__module__ = "dynoc"
        _unsupported = Unsupported
    return _unsupported


class BuildFailed(RuntimeError):
    """dynoc.compile(..., fullgraph=True) could not make built code: the dynoc
    binary is missing or cannot run, the toolchain a build needs is missing,
    or the build failed. Without fullgraph, the same is one warning and the
    calls run eagerly (never silently)."""
