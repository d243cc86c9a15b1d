"""Where a `dynoc build --target=cuda` run from this Python finds cuBLASLt and
cuDNN: torch's CUDA wheels install them as the `nvidia` namespace package
(nvidia/cu13, nvidia/cudnn, with headers), so a user with torch for CUDA has
them without a separate download. Set only where the user set nothing
(DYNOC_CUBLAS_HOME, DYNOC_CUDNN_HOME) and the headers are there; the build
itself says what is missing (`dynoc doctor` lists it)."""
import importlib.util
import os

# (variable, folder under nvidia/, a header that must be in its include/)
_CUDA_HOMES = (("DYNOC_CUBLAS_HOME", "cu13", "cublasLt.h"),
               ("DYNOC_CUDNN_HOME", "cudnn", "cudnn.h"))


def _nvidia_folders():
    try:
        spec = importlib.util.find_spec("nvidia")
    except (ImportError, ValueError):
        return []
    return list(spec.submodule_search_locations or []) if spec else []


def build_env(env=None):
    """`env` (default os.environ) with the CUDA library homes a CUDA build
    needs filled in from this Python's nvidia packages."""
    env = dict(os.environ if env is None else env)
    folders = _nvidia_folders()
    for variable, sub, header in _CUDA_HOMES:
        if env.get(variable):
            continue
        for folder in folders:
            home = os.path.join(folder, sub)
            if os.path.exists(os.path.join(home, "include", header)):
                env[variable] = home
                break
    return env
