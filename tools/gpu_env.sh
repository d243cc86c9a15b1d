# Sourced by the GPU machine's scripts (tools/test_gpu.sh,
# tools/test_multigpu.sh): puts torch's CUDA libraries (cuBLASLt, the CUDA
# runtime, cuDNN, which the built models link; NCCL, which libdynrt's NCCL
# communicator loads) on the library path and the
# carried Python binding and dynoc's package on PYTHONPATH. Needs $py, $art
# and $root set.
nvlib="$("$py" -c 'import os, nvidia; d = list(nvidia.__path__)[0]; print(":".join(os.path.join(d, s, "lib") for s in ("cu13", "cudnn", "nccl")))')"
export LD_LIBRARY_PATH="$nvlib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
export PYTHONPATH="$art/bin:$root/python:${PYTHONPATH:-}"
