"""Reference runs kept across checkouts: a program's run under PyTorch's
Dynamo or plain eager depends only on the program, the runner, torch and the
Python, so it is stored in ~/.cache/dynoc/reference-runs under a hash of
those and a fresh clone on the same machine (CI) reuses it. dynoc's own runs
are never cached. DYNOC_REFERENCE_CACHE=0 runs every reference again."""
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile

BASE = os.path.join(os.path.expanduser("~"), ".cache", "dynoc", "reference-runs")


def _key(kind, key_files, env):
    import torch
    h = hashlib.sha256()
    for part in [kind.encode(), torch.__version__.encode(), sys.version.encode(),
                 sys.executable.encode(), json.dumps(sorted((env or {}).items())).encode()] + \
            [open(p, "rb").read() for p in key_files]:
        h.update(part)
        h.update(b"\0")
    return h.hexdigest()[:32]


def run(kind, argv, key_files, out_files=(), env=None, timeout=900):
    """subprocess.run(argv) with PYTHONHASHSEED=0 and `env` added, or its
    stored result: `key_files` are the files the run depends on (its program
    and runner) and `out_files` the files it writes (restored from the store
    on a hit). Returns a CompletedProcess with text stdout and stderr."""
    use = os.environ.get("DYNOC_REFERENCE_CACHE", "1") != "0"
    entry = os.path.join(BASE, _key(kind, key_files, env))
    if use and os.path.exists(os.path.join(entry, "result.json")):
        saved = json.load(open(os.path.join(entry, "result.json")))
        for k, path in enumerate(out_files):
            stored = os.path.join(entry, f"out{k}")
            if os.path.exists(stored):
                shutil.copyfile(stored, path)
        return subprocess.CompletedProcess(argv, saved["returncode"], saved["stdout"],
                                           saved["stderr"])
    e = dict(os.environ, PYTHONHASHSEED="0", **(env or {}))
    p = subprocess.run([str(a) for a in argv], capture_output=True, text=True, env=e,
                       timeout=timeout)
    if use:
        os.makedirs(BASE, exist_ok=True)
        tmp = tempfile.mkdtemp(prefix=".writing-", dir=BASE)
        for k, path in enumerate(out_files):
            if os.path.exists(path):
                shutil.copyfile(path, os.path.join(tmp, f"out{k}"))
        with open(os.path.join(tmp, "result.json"), "w") as f:
            json.dump({"returncode": p.returncode, "stdout": p.stdout, "stderr": p.stderr}, f)
        try:
            os.rename(tmp, entry)
        except OSError:  # another process stored the same run first
            shutil.rmtree(tmp, ignore_errors=True)
    return p
