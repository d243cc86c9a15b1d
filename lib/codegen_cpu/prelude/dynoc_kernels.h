// dynoc_kernels.h - helpers that generated CPU kernels call. Compiled into
// every model .so (it is embedded into the dynoc binary and written beside the
// generated source); depends on libc, OpenMP and oneDNN only.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <algorithm>
#include <dnnl.h>

namespace dynoc_k {

// Pointwise loops go parallel only when the work pays for the fork.
constexpr int64_t kParallelGrain = 1 << 15;

// Workspace slots start on cache-line boundaries.
inline int64_t align64(int64_t bytes) { return (bytes + 63) / 64 * 64; }

// The broadcast of two dims, or -1 when they do not broadcast.
inline int64_t broadcast(int64_t a, int64_t b) {
  return a == b || b == 1 ? a : a == 1 ? b : -1;
}

template <class F>
inline void unary(float *out, const float *in, int64_t n, F f) {
#pragma omp parallel for simd if (n > kParallelGrain)
  for (int64_t i = 0; i < n; ++i)
    out[i] = f(in[i]);
}

// out[idx] = f(a[idx . as], b[idx . bs]) over `shape`; as/bs are element
// strides with 0 on broadcast dims.
template <class F>
inline void binary(float *out, const float *a, const int64_t *as,
                   const float *b, const int64_t *bs, const int64_t *shape,
                   int rank, F f) {
  int64_t n = 1;
  for (int d = 0; d < rank; ++d)
    n *= shape[d];
  if (rank == 0) {
    out[0] = f(a[0], b[0]);
    return;
  }
  int64_t inner = shape[rank - 1];
  int64_t outer = inner ? n / inner : 0;
  int64_t ai = as[rank - 1], bi = bs[rank - 1];
#pragma omp parallel for if (n > kParallelGrain)
  for (int64_t o = 0; o < outer; ++o) {
    int64_t rem = o, aoff = 0, boff = 0;
    for (int d = rank - 2; d >= 0; --d) {
      int64_t idx = rem % shape[d];
      rem /= shape[d];
      aoff += idx * as[d];
      boff += idx * bs[d];
    }
    float *dst = out + o * inner;
    const float *pa = a + aoff, *pb = b + boff;
    if (ai == 1 && bi == 1) {
#pragma omp simd
      for (int64_t i = 0; i < inner; ++i)
        dst[i] = f(pa[i], pb[i]);
    } else {
      for (int64_t i = 0; i < inner; ++i)
        dst[i] = f(pa[i * ai], pb[i * bi]);
    }
  }
}

// out[idx] = in[idx . s] * scale: broadcasts `in` over `shape`.
inline void expand(float *out, const float *in, const int64_t *s,
                   const int64_t *shape, int rank, float scale) {
  binary(out, in, s, in, s, shape, rank,
         [scale](float x, float) { return x * scale; });
}

// out = in permuted: out dim d is in dim perm[d].
inline void permute(float *out, const float *in, const int64_t *inShape,
                    const int64_t *perm, int rank) {
  int64_t inStrides[8], outShape[8], n = 1;
  for (int d = rank - 1, s = 1; d >= 0; --d) {
    inStrides[d] = s;
    s *= inShape[d];
  }
  for (int d = 0; d < rank; ++d) {
    outShape[d] = inShape[perm[d]];
    n *= outShape[d];
  }
#pragma omp parallel for if (n > kParallelGrain)
  for (int64_t i = 0; i < n; ++i) {
    int64_t rem = i, off = 0;
    for (int d = rank - 1; d >= 0; --d) {
      off += (rem % outShape[d]) * inStrides[perm[d]];
      rem /= outShape[d];
    }
    out[i] = in[off];
  }
}

// Row-major C = alpha * op(A) @ op(B) + beta * C through oneDNN.
inline int gemm(bool transA, bool transB, int64_t M, int64_t N, int64_t K,
                float alpha, const float *A, const float *B, float beta,
                float *C) {
  if (M == 0 || N == 0)
    return 0;
  dnnl_status_t s =
      dnnl_sgemm(transA ? 'T' : 'N', transB ? 'T' : 'N', M, N, K, alpha, A,
                 transA ? M : K, B, transB ? K : N, beta, C, N);
  return s == dnnl_success ? 0 : 100 + int(s);
}

inline float gelu(float x) {
  return 0.5f * x * (1.0f + std::erf(x * 0.70710678118654752f));
}
inline float gelu_tanh(float x) {
  return 0.5f * x *
         (1.0f + std::tanh(0.79788456080286536f * (x + 0.044715f * x * x * x)));
}

} // namespace dynoc_k
