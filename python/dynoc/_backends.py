"""The backend registry (a leaf, as torch/_dynamo/backends/registry.py):
dynoc's own backends, Dynamo's debugging names that mean the same here, and
those a program registers (dynoc.register_backend)."""

# name -> tags (list_backends filters on them)
BACKENDS = {"eager": ("debug",), "aot_eager": ("debug",), "inductor": ()}
# Dynamo's debugging backends that mean the same here: the recorded graphs run
# through ATen (dynoc's recording is ATen-level already).
ALIASES = {"aot_eager": "eager"}
REGISTERED = {}  # name -> callable(gm, example_inputs) (register_backend)


def register_backend(compiler_fn=None, name=None, tags=()):
    """Like torch._dynamo.register_backend: makes `compiler_fn(gm,
    example_inputs) -> callable` a backend by `name` (its __name__ by
    default). Usable as a decorator."""
    if compiler_fn is None:
        return lambda fn: register_backend(fn, name=name, tags=tags)
    if not callable(compiler_fn):
        raise TypeError(f"dynoc: register_backend expects a callable, got "
                        f"{type(compiler_fn).__name__}")
    name = name or compiler_fn.__name__
    if name in ("eager", "aot_eager", "inductor"):
        raise ValueError(f"dynoc: backend '{name}' is dynoc's own")
    BACKENDS[name] = tuple(tags)
    REGISTERED[name] = compiler_fn
    return compiler_fn


def list_backends(exclude_tags=("debug", "experimental")):
    exclude = set(exclude_tags or ())
    return sorted(n for n, tags in BACKENDS.items() if not exclude.intersection(tags))
