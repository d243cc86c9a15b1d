// dynoc_cuda_kernels.cuh - the kernel library generated CUDA graphs call.
// The same interface as the CPU target's dynoc_kernels.h (the shared graph
// emitter prints one call per op), each function here launching kernels on
// the stream the graph's run function was given. Compiled by nvcc into every
// CUDA model .so (embedded into the dynoc binary with the rest of this
// folder); depends on the CUDA runtime and cuBLASLt only.
#pragma once

#include <cublasLt.h>
// cuDNN only for graphs with a convolution (CudaBuild.cpp defines this).
#ifndef DYNOC_USE_CUDNN
#define DYNOC_USE_CUDNN 0
#endif
#if DYNOC_USE_CUDNN
#include <cudnn.h>
#endif
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

// Elementwise functions are lambdas the device runs (nvcc --extended-lambda).
#define DYNOC_FN __host__ __device__

namespace dynoc_k {

using bf16 = __nv_bfloat16;
using f16 = __half;

inline int64_t align64(int64_t bytes) { return (bytes + 63) / 64 * 64; }
inline int64_t broadcast(int64_t a, int64_t b) {
  return a == b || b == 1 ? a : a == 1 ? b : -1;
}

//===----------------------------------------------------------------------===//
// Per-thread run state: the stream, the cuBLASLt workspace, the first error.
//===----------------------------------------------------------------------===//

struct RunState {
  cudaStream_t stream = nullptr;
  void *gemmWorkspace = nullptr;
  size_t gemmWorkspaceBytes = 0;
  int error = 0; // 0, or the code the run function returns
  char message[256] = {0};
};
inline RunState &state() {
  static thread_local RunState s;
  return s;
}
// Records the first failure of this run (code: 200 + the CUDA error, 300 +
// a cuBLAS status).
inline void fail(int code, const char *what, const char *detail) {
  RunState &s = state();
  if (s.error)
    return;
  s.error = code;
  std::snprintf(s.message, sizeof s.message, "%s: %s", what, detail);
}
inline void check(cudaError_t e, const char *what) {
  if (e != cudaSuccess)
    fail(200 + int(e), what, cudaGetErrorString(e));
}
// Binds a run to its stream and workspace; the run returns finish().
// cuBLASLt and cuDNN take their workspace 256-byte aligned: the graph's
// workspace has kWorkspaceAlignment bytes of slack past the intermediates
// for aligning it up.
constexpr uintptr_t kWorkspaceAlignment = 256;
struct RunScope {
  RunScope(void *stream, char *gemmWorkspace, size_t bytes) {
    RunState &s = state();
    s.stream = static_cast<cudaStream_t>(stream);
    uintptr_t p = reinterpret_cast<uintptr_t>(gemmWorkspace);
    p = (p + kWorkspaceAlignment - 1) & ~(kWorkspaceAlignment - 1);
    s.gemmWorkspace = reinterpret_cast<char *>(p);
    s.gemmWorkspaceBytes = bytes;
    s.error = 0;
    s.message[0] = 0;
  }
};
inline int finish() { return state().error; }
inline cudaStream_t stream() { return state().stream; }

// cuBLASLt's workspace per run: a slice of the graph's workspace.
constexpr int64_t kGemmWorkspaceBytes = 8 << 20;

// The key of a per-thread plan cache (cuBLASLt's, cuDNN's): a problem's
// shape and types as N integers.
template <int N> struct PlanKey {
  int64_t v[N];
  bool operator==(const PlanKey &o) const {
    return std::memcmp(v, o.v, sizeof v) == 0;
  }
};
template <int N> struct PlanKeyHash {
  size_t operator()(const PlanKey<N> &k) const {
    size_t h = 1469598103934665603ull; // FNV-1a over the values
    for (int64_t x : k.v)
      h = (h ^ size_t(x)) * 1099511628211ull;
    return h;
  }
};

//===----------------------------------------------------------------------===//
// Launching.
//===----------------------------------------------------------------------===//

constexpr int kThreads = 256;
inline int blocksFor(int64_t n) {
  // Grid-stride loops: a few waves of blocks at most.
  int64_t b = (n + kThreads - 1) / kThreads;
  return int(std::min<int64_t>(std::max<int64_t>(b, 1), 132 * 16));
}

// Shapes and strides travel to the device by value.
struct Arr8 {
  int64_t v[8];
  Arr8() = default;
  Arr8(const int64_t *p, int rank) {
    for (int d = 0; d < 8; ++d)
      v[d] = d < rank && p ? p[d] : 0;
  }
  __host__ __device__ int64_t operator[](int d) const { return v[d]; }
};

template <class F> __global__ void pointwiseKernel(int64_t n, F f) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x)
    f(i);
}
// Runs f(i) for i in [0, n) on the run's stream.
template <class F> inline void pointwise(int64_t n, F f) {
  if (n <= 0)
    return;
  pointwiseKernel<<<blocksFor(n), kThreads, 0, stream()>>>(n, f);
  check(cudaGetLastError(), "pointwise kernel");
}

// The offset of element i of a dense `shape` read at `strides`.
__device__ inline int64_t offsetOf(int64_t i, const Arr8 &shape,
                                   const Arr8 &strides, int rank) {
  int64_t off = 0;
  for (int d = rank - 1; d >= 0; --d) {
    off += (i % shape[d]) * strides[d];
    i /= shape[d];
  }
  return off;
}

//===----------------------------------------------------------------------===//
// Elementwise.
//===----------------------------------------------------------------------===//

using vf = float; // the CPU target's vector type; one lane here
__host__ __device__ inline float vexp(float x) { return expf(x); }
__host__ __device__ inline float vtanh(float x) { return tanhf(x); }
__host__ __device__ inline float verf_fast(float x) { return erff(x); }
__host__ __device__ inline float gelu(float x) {
  return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f));
}
__host__ __device__ inline float gelu_tanh(float x) {
  return 0.5f * x *
         (1.0f + tanhf(0.79788456080286536f * (x + 0.044715f * x * x * x)));
}

inline void copy(void *dst, const void *src, int64_t bytes) {
  if (bytes > 0 && dst != src)
    check(cudaMemcpyAsync(dst, src, size_t(bytes), cudaMemcpyDeviceToDevice,
                          stream()),
          "device copy");
}

// A conversion between element types; the 2-byte floats go through float.
template <class TO, class TI> __host__ __device__ inline TO cvt(TI x) {
  constexpr bool half =
      std::is_same<TO, bf16>::value || std::is_same<TO, f16>::value ||
      std::is_same<TI, bf16>::value || std::is_same<TI, f16>::value;
  if constexpr (half)
    return TO(float(x));
  else
    return static_cast<TO>(x);
}

template <class TO, class TI> void convert(TO *out, const TI *in, int64_t n) {
  pointwise(n, [=] __device__(int64_t i) { out[i] = cvt<TO>(in[i]); });
}

template <class TO, class TI, class F>
inline void unary(TO *out, const TI *in, int64_t n, F f) {
  pointwise(n, [=] __device__(int64_t i) { out[i] = TO(f(in[i])); });
}
template <class F>
inline void vunary(float *out, const float *in, int64_t n, F f) {
  unary(out, in, n, f);
}

template <class TC, class TO, class TA, class TB, class F>
inline void binary(TO *out, const TA *a, const int64_t *as, const TB *b,
                   const int64_t *bs, const int64_t *shape, int rank, F f) {
  int64_t n = 1;
  for (int d = 0; d < rank; ++d)
    n *= shape[d];
  Arr8 sh(shape, rank), sa(as, rank), sb(bs, rank);
  pointwise(n, [=] __device__(int64_t i) {
    out[i] = TO(
        f(TC(a[offsetOf(i, sh, sa, rank)]), TC(b[offsetOf(i, sh, sb, rank)])));
  });
}

template <class T>
inline void expand(T *out, const T *in, const int64_t *s, const int64_t *shape,
                   int rank, float scale) {
  int64_t n = 1;
  for (int d = 0; d < rank; ++d)
    n *= shape[d];
  Arr8 sh(shape, rank), st(s, rank);
  pointwise(n, [=] __device__(int64_t i) {
    out[i] = T(float(in[offsetOf(i, sh, st, rank)]) * scale);
  });
}

template <class TO, class TA, class TB>
inline void where(TO *out, const bool *c, const int64_t *cs, const TA *a,
                  const int64_t *as, const TB *b, const int64_t *bs,
                  const int64_t *shape, int rank) {
  int64_t n = 1;
  for (int d = 0; d < rank; ++d)
    n *= shape[d];
  Arr8 sh(shape, rank), sc(cs, rank), sa(as, rank), sb(bs, rank);
  bool aHost = false;
  // masked_fill passes its fill value as a one-element host array.
  cudaPointerAttributes attr;
  if (cudaPointerGetAttributes(&attr, a) == cudaSuccess &&
      attr.type != cudaMemoryTypeDevice && attr.type != cudaMemoryTypeManaged)
    aHost = true;
  cudaGetLastError();
  TO fill = aHost ? TO(a[0]) : TO();
  pointwise(n, [=] __device__(int64_t i) {
    TO av = aHost ? fill : TO(a[offsetOf(i, sh, sa, rank)]);
    out[i] =
        c[offsetOf(i, sh, sc, rank)] ? av : TO(b[offsetOf(i, sh, sb, rank)]);
  });
}

//===----------------------------------------------------------------------===//
// Data movement.
//===----------------------------------------------------------------------===//

template <class T>
inline void permute(T *out, const T *in, const int64_t *inShape,
                    const int64_t *perm, int rank) {
  int64_t inStrides[8], outShape[8], stride[8], n = 1;
  for (int d = rank - 1, s = 1; d >= 0; --d) {
    inStrides[d] = s;
    s *= inShape[d];
  }
  for (int d = 0; d < rank; ++d) {
    outShape[d] = inShape[perm[d]];
    stride[d] = inStrides[perm[d]];
    n *= outShape[d];
  }
  Arr8 sh(outShape, rank), st(stride, rank);
  pointwise(
      n, [=] __device__(int64_t i) { out[i] = in[offsetOf(i, sh, st, rank)]; });
}

template <class T>
inline void broadcast_copy(T *out, const T *in, const int64_t *s,
                           const int64_t *shape, int rank) {
  int64_t n = 1;
  for (int d = 0; d < rank; ++d)
    n *= shape[d];
  Arr8 sh(shape, rank), st(s, rank);
  pointwise(
      n, [=] __device__(int64_t i) { out[i] = in[offsetOf(i, sh, st, rank)]; });
}

// Elements start, start + step, ... (len of them) of the middle dim of an
// (outer, n, inner) tensor, into a dense (outer, len, inner) one.
template <class T>
inline void slice_copy(T *out, const T *in, int64_t outer, int64_t n,
                       int64_t inner, int64_t start, int64_t step,
                       int64_t len) {
  pointwise(outer * len * inner, [=] __device__(int64_t i) {
    int64_t k = i % inner, r = i / inner, j = r % len, o = r / len;
    out[i] = in[(o * n + start + j * step) * inner + k];
  });
}
template <class T>
inline void slice(T *out, const T *in, int64_t outer, int64_t n, int64_t inner,
                  int64_t start, int64_t len) {
  slice_copy(out, in, outer, n, inner, start, int64_t(1), len);
}
// A dense (outer, len, inner) tensor at [start, start + len) of the middle
// dim of an (outer, n, inner) one.
template <class T>
inline void place(T *out, const T *in, int64_t outer, int64_t n, int64_t inner,
                  int64_t start, int64_t len) {
  pointwise(outer * len * inner, [=] __device__(int64_t i) {
    int64_t k = i % inner, r = i / inner, j = r % len, o = r / len;
    out[(o * n + start + j) * inner + k] = in[i];
  });
}

template <class T>
inline void arange(T *out, int64_t n, double start, double step) {
  pointwise(
      n, [=] __device__(int64_t i) { out[i] = T(start + double(i) * step); });
}

// Rows of `weight` picked by `indices`. An index out of range cannot fail
// the call without a host sync: its row reads as zeros (docs/cuda.md).
template <class T>
inline int embedding(T *out, const T *weight, const int64_t *indices, int64_t n,
                     int64_t rows, int64_t dim) {
  pointwise(n * dim, [=] __device__(int64_t i) {
    int64_t r = indices[i / dim];
    out[i] = r >= 0 && r < rows ? weight[r * dim + i % dim] : T(0.f);
  });
  return 0;
}

template <class T>
inline int gather(T *out, const T *in, const int64_t *index,
                  const int64_t *outShape, const int64_t *inShape, int rank,
                  int dim) {
  int64_t n = 1, inStrides[8];
  for (int d = 0; d < rank; ++d)
    n *= outShape[d];
  for (int d = rank - 1, s = 1; d >= 0; --d) {
    inStrides[d] = s;
    s *= inShape[d];
  }
  Arr8 os(outShape, rank), is(inShape, rank), st(inStrides, rank);
  pointwise(n, [=] __device__(int64_t i) {
    int64_t rem = i, off = 0;
    bool bad = false;
    for (int d = rank - 1; d >= 0; --d) {
      int64_t idx = rem % os[d];
      rem /= os[d];
      if (d == dim) {
        idx = index[i];
        bad |= idx < 0 || idx >= is[d];
      }
      off += idx * st[d];
    }
    out[i] = bad ? T(0.f) : in[off];
  });
  return 0;
}

} // namespace dynoc_k
