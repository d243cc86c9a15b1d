"""DYNOC_LOGS: capture events printed on stderr as they happen, like TORCH_LOGS.

DYNOC_LOGS is a comma-separated list of: graph_breaks, guards, recompiles,
graph_code (or `all`). An unknown name is reported once and ignored.
TORCH_LOGS is read too, so scripts run with it set get dynoc's counterparts of
Dynamo's logs (TORCH_LOG_NAMES); names with no counterpart are reported once.
"""
import os
import sys

KINDS = ("graph_breaks", "guards", "recompiles", "graph_code")


def _parse(text):
    wanted = {w.strip() for w in text.split(",") if w.strip()}
    if "all" in wanted:
        return set(KINDS)
    unknown = sorted(wanted - set(KINDS))
    if unknown:
        sys.stderr.write(f"[dynoc] DYNOC_LOGS: unknown log(s) {', '.join(unknown)} "
                         f"(known: {', '.join(KINDS)}, all)\n")
    return wanted & set(KINDS)


# TORCH_LOGS names (artifacts and components) -> the dynoc logs they mean.
TORCH_LOG_NAMES = {
    "graph_breaks": ("graph_breaks",), "guards": ("guards",),
    "recompiles": ("recompiles",), "recompiles_verbose": ("recompiles",),
    "graph_code": ("graph_code",), "graph": ("graph_code",),
    "dynamic": ("recompiles",), "dynamo": KINDS, "all": KINDS,
}


def _parse_torch(text):
    """TORCH_LOGS's grammar: names separated by commas, each with an
    optional +/- level prefix (dynoc has one level)."""
    names = {w.strip().lstrip("+-") for w in text.split(",") if w.strip()}
    unknown = sorted(n for n in names if n not in TORCH_LOG_NAMES)
    if unknown:
        sys.stderr.write(f"[dynoc] TORCH_LOGS: no dynoc counterpart of {', '.join(unknown)} "
                         f"(names dynoc reads: {', '.join(sorted(TORCH_LOG_NAMES))})\n")
    return {k for n in names if n in TORCH_LOG_NAMES for k in TORCH_LOG_NAMES[n]}


_enabled = _parse(os.environ.get("DYNOC_LOGS", "")) | \
    _parse_torch(os.environ.get("TORCH_LOGS", ""))


def enabled(kind):
    return kind in _enabled


def log(kind, message):
    """Prints `message` (one or more lines) under the `kind` tag if enabled."""
    if kind in _enabled:
        for line in str(message).rstrip("\n").splitlines():
            sys.stderr.write(f"[dynoc:{kind}] {line}\n")
