# Sourced by the GPU machine's scripts (tools/test_gpu.sh,
# tools/test_multigpu.sh): puts torch's CUDA libraries (cuBLASLt, the CUDA
# runtime, cuDNN, which the built models link) on the library path and the
# carried Python binding and dynoc's package on PYTHONPATH. Needs $py, $art
# and $root set.
nvlib="$("$py" -c 'import os, nvidia; d = list(nvidia.__path__)[0]; print(os.path.join(d, "cu13", "lib") + ":" + os.path.join(d, "cudnn", "lib"))')"
export LD_LIBRARY_PATH="$nvlib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
export PYTHONPATH="$art/bin:$root/lib/capture/python:${PYTHONPATH:-}"
