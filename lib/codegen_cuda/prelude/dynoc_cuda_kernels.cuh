// dynoc_cuda_kernels.cuh - the kernel library generated CUDA graphs call:
// its core, which each model's source includes. The same interface as the
// CPU target's dynoc_kernels.h (the shared graph emitter prints one call per
// op), each function here launching kernels on the stream the graph's run
// function was given. The elementwise and data-movement templates here are
// instantiated by the model; GEMMs, normalizations, reductions, attention and
// convolutions are compiled once into the kernel library (library/*.cu,
// declared in dynoc_cuda_library.cuh), which the build caches. Depends on the
// CUDA runtime only.
#pragma once

// The 2-byte float types' headers are a third of a small model's compile
// time: a model includes them only where its graph has bf16/f16 tensors
// (CudaBuild.cpp defines DYNOC_HALF_TYPES=0 otherwise); the library always.
#ifndef DYNOC_HALF_TYPES
#define DYNOC_HALF_TYPES 1
#endif
#if DYNOC_HALF_TYPES
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#endif
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <type_traits>
#include <utility>

// Elementwise functions are lambdas the device runs (nvcc --extended-lambda).
#define DYNOC_FN __host__ __device__

namespace dynoc_k {

#if DYNOC_HALF_TYPES
using bf16 = __nv_bfloat16;
using f16 = __half;
template <class T>
struct IsHalf : std::integral_constant<bool, std::is_same<T, bf16>::value ||
                                                 std::is_same<T, f16>::value> {
};
#else
template <class T> struct IsHalf : std::false_type {};
#endif

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
// The calling thread's (library/core.cu).
RunState &state();
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
// The device's pool for kernels' scratch (a padded GEMM's operands, a split
// reduction's partial results), which keeps what it has allocated (a replay
// or the next call reuses it); null where pools are unsupported (core.cu).
cudaMemPool_t scratchPool();

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
// Elements per thread per iteration of an elementwise kernel, loaded before
// any is stored (lib/codegen_cuda/CudaTarget.cpp: printCudaPointwise). On an
// H100, 4 made MobileNetV2's bf16 batch-norm + ReLU6 pass 52 us; 8 (16 bytes
// of bf16 per thread) made it 62 us.
constexpr int kPointwiseUnroll = 4;
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

// Launches a generated grid-stride kernel(n, args...) over n elements on the
// run's stream, its index type int64_t.
#define DYNOC_LAUNCH(kernel, n, ...)                                           \
  do {                                                                         \
    const int64_t dynoc_n = (n);                                               \
    if (dynoc_n > 0) {                                                         \
      kernel<<<dynoc_k::blocksFor(dynoc_n), dynoc_k::kThreads, 0,              \
               dynoc_k::stream()>>>(dynoc_n, __VA_ARGS__);                     \
      dynoc_k::check(cudaGetLastError(), #kernel);                             \
    }                                                                          \
  } while (0)
// The same with an unsigned 32-bit index, where the printer knows n < 2^31:
// a broadcast operand's offset divides by constants, which is a 32-bit
// multiply-high here and a much longer sequence in 64 bits.
#define DYNOC_LAUNCH32(kernel, n, ...)                                         \
  do {                                                                         \
    const int64_t dynoc_n = (n);                                               \
    if (dynoc_n > 0) {                                                         \
      kernel<<<dynoc_k::blocksFor(dynoc_n), dynoc_k::kThreads, 0,              \
               dynoc_k::stream()>>>(unsigned(dynoc_n), __VA_ARGS__);           \
      dynoc_k::check(cudaGetLastError(), #kernel);                             \
    }                                                                          \
  } while (0)

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

// The stream a collective is ordered on (dynoc_collectives.h): the run's.
// The communicator makes its own stream wait for the kernels queued before
// the collective, and the run's later kernels wait for the collective at its
// dynoc.wait_tensor (events, or host waits: the communicator's choice).
inline void *collective_stream() { return stream(); }

// A conversion between element types; the 2-byte floats go through float.
template <class TO, class TI> __host__ __device__ inline TO cvt(TI x) {
  constexpr bool half = IsHalf<TO>::value || IsHalf<TI>::value;
  if constexpr (half)
    return TO(float(x));
  else
    return static_cast<TO>(x);
}

template <class TO, class TI> void convert(TO *out, const TI *in, int64_t n) {
  pointwise(n, [=] __device__(int64_t i) { out[i] = cvt<TO>(in[i]); });
}

// constant_pad_nd: out has `rank` (at most kMaxPadRank) dims `os`, in `is`;
// before[d] elements of `value` come before input dim d (negative: cropped).
// One thread per output element (the CPU prelude's loop, per index).
constexpr int kMaxPadRank = 8;
struct PadShape {
  int64_t os[kMaxPadRank], is[kMaxPadRank], before[kMaxPadRank];
};
template <class T>
inline void constant_pad(T *out, const T *in, const int64_t *os,
                         const int64_t *is, const int64_t *before, int rank,
                         T value) {
  PadShape s{};
  int64_t n = 1;
  for (int d = 0; d < rank; ++d) {
    s.os[d] = os[d];
    s.is[d] = is[d];
    s.before[d] = before[d];
    n *= os[d];
  }
  pointwise(n, [=] __device__(int64_t i) {
    int64_t rest = i, src = 0, stride = 1;
    bool inside = true;
    for (int d = rank - 1; d >= 0; --d) {
      int64_t x = rest % s.os[d] - s.before[d];
      rest /= s.os[d];
      inside = inside && x >= 0 && x < s.is[d];
      src += x * stride;
      stride *= s.is[d];
    }
    out[i] = inside ? in[src] : value;
  });
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
// Convolutional networks' pooling and eval-mode batch norm (their
// convolutions are the library's, through cuDNN).
//===----------------------------------------------------------------------===//

// The largest element of output (oh, ow)'s window in a plane, and its flat
// index (h * W + w): the first largest, or the last NaN (ATen's rule); a
// window wholly in the padding gives -inf and index 0.
template <class T>
__device__ inline float
poolWindowMax(const T *plane, int64_t H, int64_t W, int64_t oh, int64_t ow,
              int64_t kh, int64_t kw, int64_t sh, int64_t sw, int64_t ph,
              int64_t pw, int64_t dh, int64_t dw, int64_t *index) {
  float m = -INFINITY;
  int64_t at = -1;
  for (int64_t r = 0; r < kh; ++r) {
    int64_t h = oh * sh - ph + r * dh;
    if (h < 0 || h >= H)
      continue;
    for (int64_t s = 0; s < kw; ++s) {
      int64_t w = ow * sw - pw + s * dw;
      if (w < 0 || w >= W)
        continue;
      float v = float(plane[h * W + w]);
      if (at < 0 || v > m || v != v) {
        m = v;
        at = h * W + w;
      }
    }
  }
  *index = at < 0 ? 0 : at;
  return m;
}

// Max pooling, a thread per output; NaN propagates (as torch's kernel does).
template <class T>
inline void max_pool2d(T *out, const T *in, int64_t planes, int64_t H,
                       int64_t W, int64_t OH, int64_t OW, int64_t kh,
                       int64_t kw, int64_t sh, int64_t sw, int64_t ph,
                       int64_t pw, int64_t dh, int64_t dw) {
  pointwise(planes * OH * OW, [=] __device__(int64_t i) {
    int64_t ow = i % OW, oh = (i / OW) % OH, p = i / (OW * OH), at;
    out[i] = T(poolWindowMax(in + p * H * W, H, W, oh, ow, kh, kw, sh, sw, ph,
                             pw, dh, dw, &at));
  });
}

// Max pooling that also writes, per output, the index of the element its
// window took (poolWindowMax), for the backward pass.
template <class T>
inline void max_pool2d_indices(T *out, int64_t *idx, const T *in,
                               int64_t planes, int64_t H, int64_t W, int64_t OH,
                               int64_t OW, int64_t kh, int64_t kw, int64_t sh,
                               int64_t sw, int64_t ph, int64_t pw, int64_t dh,
                               int64_t dw) {
  pointwise(planes * OH * OW, [=] __device__(int64_t i) {
    int64_t ow = i % OW, oh = (i / OW) % OH, p = i / (OW * OH);
    out[i] = T(poolWindowMax(in + p * H * W, H, W, oh, ow, kh, kw, sh, sw, ph,
                             pw, dh, dw, idx + i));
  });
}

// The gradient of max pooling: dx is zero but where a window took an
// element, which gets the sum of those windows' dy (windows may overlap:
// atomic adds; f32 only).
template <class T>
inline void max_pool2d_backward(T *dx, const T *dy, const int64_t *idx,
                                int64_t planes, int64_t H, int64_t W,
                                int64_t OH, int64_t OW) {
  static_assert(std::is_same<T, float>::value,
                "max_pool2d backward is f32 only on this target");
  if (planes * H * W == 0)
    return;
  check(cudaMemsetAsync(dx, 0, size_t(planes * H * W) * sizeof(T), stream()),
        "max_pool2d backward");
  pointwise(planes * OH * OW, [=] __device__(int64_t i) {
    const int64_t p = i / (OH * OW);
    atomicAdd(dx + p * H * W + idx[i], dy[i]);
  });
}

// cumsum along one dim of an [outer, n, inner] view, accumulated in the
// output's type (ATen promotes integer inputs to int64), bf16/f16 in float
// as ATen's CUDA scan does: one thread scans each of the outer * inner lines
// in order. Meant for position ids and masks (lines of a few thousand), not
// for long float scans.
template <class TO, class TI>
inline void cumsum(TO *out, const TI *in, int64_t outer, int64_t n,
                   int64_t inner) {
  using Acc = std::conditional_t<IsHalf<TO>::value, float, TO>;
  pointwise(outer * inner, [=] __device__(int64_t line) {
    const int64_t o = line / inner, k = line % inner;
    Acc acc = Acc(0);
    for (int64_t i = 0; i < n; ++i) {
      const int64_t at = (o * n + i) * inner + k;
      acc = acc + cvt<Acc>(in[at]);
      out[at] = cvt<TO>(acc);
    }
  });
}

// embedding_dense_backward: out[rows, D] zeroed, then each gradient
// element added to the row its index names (atomic adds, as Inductor's
// index_put: the order of a row's sum varies from run to run; f32 only). An
// index out of range or padding's adds nothing (the forward read zeros).
template <class T>
inline int embedding_backward(T *out, const T *g, const int64_t *indices,
                              int64_t n, int64_t rows, int64_t D,
                              int64_t padding) {
  static_assert(std::is_same<T, float>::value,
                "embedding backward is f32 only on this target");
  if (rows * D == 0)
    return 0;
  check(cudaMemsetAsync(out, 0, size_t(rows * D) * sizeof(T), stream()),
        "embedding backward");
  pointwise(n * D, [=] __device__(int64_t i) {
    const int64_t r = indices[i / D];
    if (r >= 0 && r < rows && r != padding)
      atomicAdd(out + r * D + i % D, g[i]);
  });
  return 0;
}

// An eval-mode batch norm's per-channel scale and shift (for a fused loop).
template <class TS>
inline void bn_scale_shift(float *scale, float *shift, const TS *mean,
                           const TS *var, const TS *weight, const TS *bias,
                           int64_t C, double eps) {
  pointwise(C, [=] __device__(int64_t c) {
    double s = (weight ? double(float(weight[c])) : 1.0) /
               sqrt(double(float(var[c])) + eps);
    scale[c] = float(s);
    shift[c] = (bias ? float(bias[c]) : 0.f) - float(mean[c]) * float(s);
  });
}

template <class T, class TS>
inline void batch_norm(T *out, const T *in, const TS *mean, const TS *var,
                       const TS *weight, const TS *bias, int64_t N, int64_t C,
                       int64_t inner, double eps) {
  pointwise(N * C * inner, [=] __device__(int64_t i) {
    int64_t c = (i / inner) % C;
    double s = (weight ? double(float(weight[c])) : 1.0) /
               sqrt(double(float(var[c])) + eps);
    float scale = float(s);
    float shift = (bias ? float(bias[c]) : 0.f) - float(mean[c]) * scale;
    out[i] = T(float(in[i]) * scale + shift);
  });
}

} // namespace dynoc_k
