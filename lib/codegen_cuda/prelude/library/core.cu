// core.cu - the kernel library's per-thread run state, shared by a model's
// generated code and the library's functions (dynoc_cuda_kernels.cuh), and
// the process's cuBLASLt handle, which loading a model creates.
#include "dynoc_cuda_core.cuh"

#include <cublasLt.h>

#include <mutex>
#include <unordered_map>

namespace dynoc_k {

RunState &state() {
  static thread_local RunState s;
  return s;
}

cublasLtHandle_t &ltHandle() {
  static cublasLtHandle_t h = nullptr;
  return h;
}

int gemmInit(char *message) {
  static std::once_flag once;
  static int rc = 0;
  static char text[256];
  std::call_once(once, [] {
    cublasStatus_t s = cublasLtCreate(&ltHandle());
    if (s != CUBLAS_STATUS_SUCCESS) {
      std::snprintf(text, sizeof text, "cublasLtCreate: %s",
                    cublasLtGetStatusString(s));
      rc = 300 + int(s);
    }
  });
  if (rc)
    std::snprintf(message, 256, "%s", text);
  return rc;
}

cudaMemPool_t scratchPool() {
  static std::mutex mu;
  static std::unordered_map<int, cudaMemPool_t> pools;
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess)
    return nullptr;
  std::lock_guard<std::mutex> lock(mu);
  auto it = pools.find(device);
  if (it != pools.end())
    return it->second;
  cudaMemPoolProps props = {};
  props.allocType = cudaMemAllocationTypePinned;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = device;
  cudaMemPool_t pool = nullptr;
  if (cudaMemPoolCreate(&pool, &props) == cudaSuccess) {
    uint64_t keep = UINT64_MAX;
    cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep);
  } else {
    cudaGetLastError();
    pool = nullptr;
  }
  pools[device] = pool;
  return pool;
}

} // namespace dynoc_k
