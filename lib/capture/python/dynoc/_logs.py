"""DYNOC_LOGS: capture events printed on stderr as they happen, like TORCH_LOGS.

DYNOC_LOGS is a comma-separated list of: graph_breaks, guards, recompiles,
graph_code (or `all`). An unknown name is reported once and ignored.
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


_enabled = _parse(os.environ.get("DYNOC_LOGS", ""))


def enabled(kind):
    return kind in _enabled


def log(kind, message):
    """Prints `message` (one or more lines) under the `kind` tag if enabled."""
    if kind in _enabled:
        for line in str(message).rstrip("\n").splitlines():
            sys.stderr.write(f"[dynoc:{kind}] {line}\n")
