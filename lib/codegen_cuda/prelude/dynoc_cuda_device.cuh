// dynoc_cuda_device.cuh - the device API a CUDA model .so exports to
// libdynrt (model_abi.h's dynoc_device_api): memory, copies, streams and
// CUDA graphs through the CUDA runtime this .so links.
#pragma once

namespace dynoc_k {

inline char *apiMessage() {
  static thread_local char message[256];
  return message;
}
inline int apiResult(cudaError_t e, const char *what) {
  if (e == cudaSuccess)
    return 0;
  std::snprintf(apiMessage(), 256, "%s: %s", what, cudaGetErrorString(e));
  cudaGetLastError(); // clear a non-sticky error
  return 200 + int(e);
}

inline int apiInit(int device) {
  if (int rc = apiResult(cudaSetDevice(device), "cudaSetDevice"))
    return rc;
  return gemmInit(apiMessage());
}
inline int apiCurrentDevice(int *device) {
  return apiResult(cudaGetDevice(device), "cudaGetDevice");
}
inline int apiAlloc(void **ptr, uint64_t bytes) {
  return apiResult(cudaMalloc(ptr, bytes ? bytes : 1), "cudaMalloc");
}
inline int apiRelease(void *ptr) {
  return apiResult(cudaFree(ptr), "cudaFree");
}
inline int apiCopy(void *dst, const void *src, uint64_t bytes, int kind,
                   void *stream) {
  if (bytes == 0)
    return 0;
  cudaMemcpyKind k = kind == DYNOC_COPY_HOST_TO_DEVICE ? cudaMemcpyHostToDevice
                     : kind == DYNOC_COPY_DEVICE_TO_HOST
                         ? cudaMemcpyDeviceToHost
                         : cudaMemcpyDeviceToDevice;
  return apiResult(
      cudaMemcpyAsync(dst, src, bytes, k, static_cast<cudaStream_t>(stream)),
      "cudaMemcpyAsync");
}
inline int apiSync(void *stream) {
  return apiResult(cudaStreamSynchronize(static_cast<cudaStream_t>(stream)),
                   "cudaStreamSynchronize");
}
inline int apiStreamCreate(void **stream) {
  cudaStream_t s = nullptr;
  int rc = apiResult(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking),
                     "cudaStreamCreateWithFlags");
  *stream = s;
  return rc;
}
inline int apiStreamRelease(void *stream) {
  return apiResult(cudaStreamDestroy(static_cast<cudaStream_t>(stream)),
                   "cudaStreamDestroy");
}
inline int apiGraphBegin(void *stream) {
  // Thread-local mode: other threads' CUDA calls do not break this capture.
  return apiResult(cudaStreamBeginCapture(static_cast<cudaStream_t>(stream),
                                          cudaStreamCaptureModeThreadLocal),
                   "cudaStreamBeginCapture");
}
inline int apiGraphEnd(void *stream, void **exec) {
  cudaGraph_t graph = nullptr;
  if (int rc = apiResult(
          cudaStreamEndCapture(static_cast<cudaStream_t>(stream), &graph),
          "cudaStreamEndCapture"))
    return rc;
  cudaGraphExec_t e = nullptr;
  int rc =
      apiResult(cudaGraphInstantiate(&e, graph, 0), "cudaGraphInstantiate");
  cudaGraphDestroy(graph);
  *exec = e;
  return rc;
}
inline int apiGraphLaunch(void *exec, void *stream) {
  return apiResult(cudaGraphLaunch(static_cast<cudaGraphExec_t>(exec),
                                   static_cast<cudaStream_t>(stream)),
                   "cudaGraphLaunch");
}
inline int apiGraphRelease(void *exec) {
  return apiResult(cudaGraphExecDestroy(static_cast<cudaGraphExec_t>(exec)),
                   "cudaGraphExecDestroy");
}
inline int apiPointerDevice(const void *ptr, int *device) {
  cudaPointerAttributes a;
  cudaError_t e = cudaPointerGetAttributes(&a, ptr);
  if (e != cudaSuccess) {
    cudaGetLastError();
    *device = -1;
    return 0;
  }
  *device = a.type == cudaMemoryTypeDevice || a.type == cudaMemoryTypeManaged
                ? a.device
                : -1;
  return 0;
}
inline const char *apiLastError() { return apiMessage(); }

} // namespace dynoc_k

// The run functions' failures (RunState) are read through last_error too.
extern "C" __attribute__((visibility("default"))) const dynoc_device_api *
dynoc_model_device(void) {
  static const dynoc_device_api api = {
      DYNOC_DEVICE_API_VERSION,
      "cuda",
      dynoc_k::apiInit,
      dynoc_k::apiCurrentDevice,
      dynoc_k::apiAlloc,
      dynoc_k::apiRelease,
      dynoc_k::apiCopy,
      dynoc_k::apiSync,
      dynoc_k::apiStreamCreate,
      dynoc_k::apiStreamRelease,
      dynoc_k::apiGraphBegin,
      dynoc_k::apiGraphEnd,
      dynoc_k::apiGraphLaunch,
      dynoc_k::apiGraphRelease,
      dynoc_k::apiPointerDevice,
      [] {
        const dynoc_k::RunState &s = dynoc_k::state();
        return s.error ? static_cast<const char *>(s.message)
                       : dynoc_k::apiLastError();
      }};
  return &api;
}
