// dynoc_kernels.h - helpers that generated CPU kernels call. Compiled into
// every model .so (it is embedded into the dynoc binary and written beside the
// generated source); depends on libc, OpenMP and oneDNN only.
#pragma once

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <dnnl.h>
#include <initializer_list>
#include <limits>
#include <memory>
#include <mutex>
#include <tuple>
#include <type_traits>
#include <vector>
#if defined(__AVX512F__) || defined(__AVX2__)
#include <immintrin.h>
#include <sleef.h>
#endif

// The kernel library's interface is shared with the CUDA target's prelude
// (lib/codegen_cuda/prelude): the same functions, there launching kernels.
// Elementwise functions are lambdas marked DYNOC_FN, which CUDA needs to run
// them on the device and the CPU does not.
#define DYNOC_FN

namespace dynoc_k {

// Pointwise loops go parallel only when the work pays for the fork.
constexpr int64_t kParallelGrain = 1 << 15;

// Workspace slots start on cache-line boundaries.
inline int64_t align64(int64_t bytes) { return (bytes + 63) / 64 * 64; }

// Copies `bytes` bytes between buffers of the target's memory.
inline void copy(void *dst, const void *src, int64_t bytes) {
  if (dst != src)
    std::memcpy(dst, src, bytes);
}
// The stream a collective is ordered on (dynoc_collectives.h): none on the
// CPU, whose kernels are done when they return.
inline void *collective_stream() { return nullptr; }

// Reduced-precision storage types. Arithmetic on them happens in float (the
// dynoc-widen-reduced-precision pass converts around every op that computes,
// except the GEMMs of dynoc_kernels_nn.h, which read them and accumulate in
// f32); kernels that only move elements copy them as they are.
// Each has an assignment from float: `dst[i] = x` under `#pragma omp simd`
// through the converting constructor and a copy makes GCC keep a per-lane
// temporary and give up vectorizing the loop (13x slower on a fused loop).
struct bf16 {
  uint16_t bits;
  bf16() = default;
  bf16(float f) : bits(round(f)) {}
  bf16 &operator=(float f) {
    bits = round(f);
    return *this;
  }
  // Round to nearest even; NaN stays a (quiet) NaN.
  static uint16_t round(float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return (u & 0x7fffffffu) > 0x7f800000u
               ? uint16_t((u >> 16) | 0x40)
               : uint16_t((u + 0x7fffu + ((u >> 16) & 1)) >> 16);
  }
  operator float() const {
    uint32_t u = uint32_t(bits) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  }
};

struct f16 {
  _Float16 value;
  f16() = default;
  f16(float f) : value(static_cast<_Float16>(f)) {}
  f16 &operator=(float f) {
    value = static_cast<_Float16>(f);
    return *this;
  }
  operator float() const { return static_cast<float>(value); }
};
static_assert(sizeof(bf16) == 2 && sizeof(f16) == 2, "2-byte elements");

// o = v in o's type; to bf16/f16 from float through their assignment, which
// a `#pragma omp simd` loop vectorizes (see bf16).
template <class TO, class TI> inline void assign(TO &o, TI v) { o = TO(v); }
inline void assign(bf16 &o, float v) { o = v; }
inline void assign(f16 &o, float v) { o = v; }

// Converts `n` elements to another element type (aten._to_copy). The pragma
// vectorizes it at -O2 (the build's default), where GCC's own vectorizer
// leaves this loop scalar.
template <class TO, class TI> void convert(TO *out, const TI *in, int64_t n) {
#pragma omp parallel for simd if (n > kParallelGrain)
  for (int64_t i = 0; i < n; ++i)
    assign(out[i], in[i]);
}

// The broadcast of two dims, or -1 when they do not broadcast.
inline int64_t broadcast(int64_t a, int64_t b) {
  return a == b || b == 1 ? a : a == 1 ? b : -1;
}

// Vectors for the transcendental kernels (exp, erf, tanh through Sleef): a
// GCC vector of kLanes floats, the widest the target has.
#if defined(__AVX512F__)
constexpr int kLanes = 16;
typedef float vf __attribute__((vector_size(64)));
inline vf vexp(vf x) { return (vf)Sleef_expf16_u10avx512f((__m512)x); }
inline vf verf(vf x) { return (vf)Sleef_erff16_u10avx512f((__m512)x); }
inline vf vtanh(vf x) { return (vf)Sleef_tanhf16_u10avx512f((__m512)x); }
#elif defined(__AVX2__)
constexpr int kLanes = 8;
typedef float vf __attribute__((vector_size(32)));
inline vf vexp(vf x) { return (vf)Sleef_expf8_u10avx2((__m256)x); }
inline vf verf(vf x) { return (vf)Sleef_erff8_u10avx2((__m256)x); }
inline vf vtanh(vf x) { return (vf)Sleef_tanhf8_u10avx2((__m256)x); }
#else
constexpr int kLanes = 1;
typedef float vf;
inline vf vexp(vf x) { return std::exp(x); }
inline vf verf(vf x) { return std::erf(x); }
inline vf vtanh(vf x) { return std::tanh(x); }
#endif

inline vf vload(const float *p) {
  vf v;
  std::memcpy(&v, p, sizeof(vf));
  return v;
}
inline void vstore(float *p, vf v) { std::memcpy(p, &v, sizeof(vf)); }

// erf through Abramowitz & Stegun 7.1.26 on exp (|error| < 1.5e-7): several
// times faster than Sleef's erf at the accuracy float32 models need.
inline vf verf_fast(vf x) {
  vf ax = x < 0 ? -x : x;
  vf t = 1.f / (1.f + 0.3275911f * ax);
  vf poly =
      t * (0.254829592f +
           t * (-0.284496736f +
                t * (1.421413741f + t * (-1.453152027f + t * 1.061405429f))));
  vf y = 1.f - poly * vexp(-ax * ax);
  return x < 0 ? -y : y;
}

// out[i] = f(in[i]) with f on whole vectors, on the calling thread; the tail
// goes through a padded vector so that it gets the same numerics.
template <class F>
inline void vmap(float *out, const float *in, int64_t n, F f) {
  int64_t body = n - n % kLanes;
  for (int64_t i = 0; i < body; i += kLanes)
    vstore(out + i, f(vload(in + i)));
  if (int64_t tail = n - body) {
    float buf[kLanes] = {};
    std::memcpy(buf, in + body, size_t(tail) * sizeof(float));
    vstore(buf, f(vload(buf)));
    std::memcpy(out + body, buf, size_t(tail) * sizeof(float));
  }
}

// vmap over threads when the work pays for it, in chunks of whole vectors.
template <class F>
inline void vunary(float *out, const float *in, int64_t n, F f) {
  constexpr int64_t kChunk = 256 * kLanes;
  int64_t chunks = (n + kChunk - 1) / kChunk;
#pragma omp parallel for if (n > kParallelGrain)
  for (int64_t c = 0; c < chunks; ++c)
    vmap(out + c * kChunk, in + c * kChunk, std::min(kChunk, n - c * kChunk),
         f);
}

// out[i] = f(in[i]); f takes the input's element type (a 0-d operand of
// another dtype is read as its own type) and its result converts to TO.
template <class TO, class TI, class F>
inline void unary(TO *out, const TI *in, int64_t n, F f) {
#pragma omp parallel for simd if (n > kParallelGrain)
  for (int64_t i = 0; i < n; ++i)
    out[i] = f(in[i]);
}

// out[idx] = f(a[idx . as], b[idx . bs]) over `shape`; as/bs are element
// strides with 0 on broadcast dims. Operands are converted to the compute type
// TC first (a wrapped Python number, an int64 index), as ATen computes in the
// promoted dtype; TC is the result's type except for comparisons.
template <class TC, class TO, class TA, class TB, class F>
inline void binary(TO *out, const TA *a, const int64_t *as, const TB *b,
                   const int64_t *bs, const int64_t *shape, int rank, F f) {
  int64_t n = 1;
  for (int d = 0; d < rank; ++d)
    n *= shape[d];
  if (rank == 0) {
    out[0] = f(TC(a[0]), TC(b[0]));
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
    TO *dst = out + o * inner;
    const TA *pa = a + aoff;
    const TB *pb = b + boff;
    if (ai == 1 && bi == 1) {
#pragma omp simd
      for (int64_t i = 0; i < inner; ++i)
        dst[i] = f(TC(pa[i]), TC(pb[i]));
    } else {
      for (int64_t i = 0; i < inner; ++i)
        dst[i] = f(TC(pa[i * ai]), TC(pb[i * bi]));
    }
  }
}

// Eval-mode batch norm as a per-channel affine: y = x * scale + shift.
inline void bn_scale_shift(float *scale, float *shift, const float *mean,
                           const float *var, const float *weight,
                           const float *bias, int64_t C, double eps) {
  for (int64_t c = 0; c < C; ++c) {
    scale[c] =
        float((weight ? weight[c] : 1.0) / std::sqrt(double(var[c]) + eps));
    shift[c] = (bias ? bias[c] : 0.f) - mean[c] * scale[c];
  }
}

// out = in permuted: out dim d is in dim perm[d]. Walks the output in order,
// carrying the input offset along (no division per element).
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
  if (rank == 0 || n == 0) {
    if (n)
      out[0] = in[0];
    return;
  }
  int64_t inner = outShape[rank - 1], innerStride = stride[rank - 1];
  // The output dim q that walks the input's last (unit-stride) dim: when it
  // is not the output's last, a row reads at a stride, one cache line per
  // element. Tiles of the (q, last) plane read and write whole lines.
  int q = 0;
  while (q < rank && stride[q] != 1)
    ++q;
  if (q < rank - 1 && innerStride != 1 && outShape[q] >= 8 && inner >= 8) {
    constexpr int64_t kTile = 32;
    int64_t outStrides[8];
    for (int d = rank - 1, s = 1; d >= 0; --d) {
      outStrides[d] = s;
      s *= outShape[d];
    }
    const int64_t Q = outShape[q], planes = n / (Q * inner),
                  tiles = (Q + kTile - 1) / kTile;
#pragma omp parallel for collapse(2) if (n > kParallelGrain)
    for (int64_t p = 0; p < planes; ++p)
      for (int64_t t = 0; t < tiles; ++t) {
        int64_t rem = p, inOff = 0, outOff = 0;
        for (int d = rank - 2; d >= 0; --d) {
          if (d == q)
            continue;
          int64_t idx = rem % outShape[d];
          rem /= outShape[d];
          inOff += idx * stride[d];
          outOff += idx * outStrides[d];
        }
        const int64_t i1 = std::min(Q, (t + 1) * kTile);
        for (int64_t j0 = 0; j0 < inner; j0 += kTile) {
          const int64_t j1 = std::min(inner, j0 + kTile);
          for (int64_t i = t * kTile; i < i1; ++i) {
            T *dst = out + outOff + i * outStrides[q];
            const T *src = in + inOff + i;
            for (int64_t j = j0; j < j1; ++j)
              dst[j] = src[j * innerStride];
          }
        }
      }
    return;
  }
  int64_t rows = n / inner;
#pragma omp parallel for if (n > kParallelGrain)
  for (int64_t r = 0; r < rows; ++r) {
    int64_t rem = r, off = 0;
    for (int d = rank - 2; d >= 0; --d) {
      off += (rem % outShape[d]) * stride[d];
      rem /= outShape[d];
    }
    T *dst = out + r * inner;
    const T *src = in + off;
    for (int64_t i = 0; i < inner; ++i)
      dst[i] = src[i * innerStride];
  }
}

// Whether any of n elements is zero (an integer divisor, where ATen raises).
template <class T> inline bool any_zero(const T *x, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    if (x[i] == 0)
      return true;
  return false;
}

// Row-major C = alpha * op(A) @ op(B) + beta * C through oneDNN.
inline int gemm(bool transA, bool transB, int64_t M, int64_t N, int64_t K,
                float alpha, const float *A, const float *B, float beta,
                float *C) {
  if (M == 0 || N == 0)
    return 0;
  if (K == 0) { // an empty sum: oneDNN refuses a leading dimension of 0
    for (int64_t i = 0; i < M * N; ++i)
      C[i] = beta == 0 ? 0.f : beta * C[i];
    return 0;
  }
  dnnl_status_t s =
      dnnl_sgemm(transA ? 'T' : 'N', transB ? 'T' : 'N', M, N, K, alpha, A,
                 transA ? M : K, B, transB ? K : N, beta, C, N);
  return s == dnnl_success ? 0 : 100 + int(s);
}

// Batched row-major GEMM: C[b] = A[b] @ B[b] (no transposes); sb* are element
// strides between batch entries (0 broadcasts one operand).
// Many small GEMMs run one per thread (oneDNN runs single-threaded inside a
// parallel region); few large ones let oneDNN use the threads.
inline int bmm(int64_t batch, int64_t M, int64_t N, int64_t K, const float *A,
               int64_t sa, const float *B, int64_t sb, float *C) {
  int rc = 0;
#pragma omp parallel for if (batch > 1 && M * N * K < (int64_t(1) << 21))      \
    reduction(max : rc)
  for (int64_t b = 0; b < batch; ++b)
    rc = std::max(rc, gemm(false, false, M, N, K, 1.f, A + b * sa, B + b * sb,
                           0.f, C + b * M * N));
  return rc;
}

// The columns of a 2-D convolution's input: col[crs][n * P + p] (P = OH *
// OW, crs over group g's C/groups channels and the R x S window) for images
// [n0, n0 + count), zeros where the window reads padding.
inline void im2col(const float *in, int64_t C, int64_t H, int64_t W, int64_t Cg,
                   int64_t R, int64_t S, int64_t OH, int64_t OW, int64_t sh,
                   int64_t sw, int64_t ph, int64_t pw, int64_t dh, int64_t dw,
                   int64_t n0, int64_t count, int64_t g, float *dst0) {
  int64_t CRS = Cg * R * S, P = OH * OW, width = count * P;
#pragma omp parallel for collapse(2) if (CRS * width > kParallelGrain)
  for (int64_t crs = 0; crs < CRS; ++crs)
    for (int64_t n = 0; n < count; ++n) {
      int64_t c = crs / (R * S), r = (crs / S) % R, s = crs % S;
      const float *img = in + ((n0 + n) * C + g * Cg + c) * H * W;
      float *dst = dst0 + crs * width + n * P;
      for (int64_t oh = 0; oh < OH; ++oh) {
        int64_t ih = oh * sh - ph + r * dh;
        if (ih < 0 || ih >= H) {
          std::memset(dst + oh * OW, 0, size_t(OW) * sizeof(float));
          continue;
        }
        const float *row = img + ih * W;
        if (sw == 1) {
          // A contiguous run of the input row, zeros on either side.
          int64_t shift = s * dw - pw;
          int64_t lo = std::min(OW, std::max<int64_t>(0, -shift));
          int64_t hi = std::max(lo, std::min(OW, W - shift));
          float *d = dst + oh * OW;
          std::memset(d, 0, size_t(lo) * sizeof(float));
          std::memcpy(d + lo, row + lo + shift,
                      size_t(hi - lo) * sizeof(float));
          std::memset(d + hi, 0, size_t(OW - hi) * sizeof(float));
          continue;
        }
        for (int64_t ow = 0; ow < OW; ++ow) {
          int64_t iw = ow * sw - pw + s * dw;
          dst[oh * OW + ow] = iw >= 0 && iw < W ? row[iw] : 0.f;
        }
      }
    }
}

// 2-D convolution, NCHW, as im2col + GEMM. With one group, the columns of
// all N images go into one GEMM (a wide one keeps oneDNN efficient), whose
// [K, N*P] result is then laid out as NCHW with the bias; `col` is scratch of
// (C*R*S + K) * N * OH * OW floats. With several groups, one GEMM per image and
// group; `col` is C/groups * R * S * OH * OW floats. bias may be null.
inline int conv2d(float *out, const float *in, const float *w,
                  const float *bias, int64_t N, int64_t C, int64_t H, int64_t W,
                  int64_t K, int64_t R, int64_t S, int64_t OH, int64_t OW,
                  int64_t sh, int64_t sw, int64_t ph, int64_t pw, int64_t dh,
                  int64_t dw, int64_t groups, float *col) {
  int64_t Cg = C / groups, Kg = K / groups, CRS = Cg * R * S, P = OH * OW;
  auto columns = [&](int64_t n0, int64_t count, int64_t g, float *dst) {
    im2col(in, C, H, W, Cg, R, S, OH, OW, sh, sw, ph, pw, dh, dw, n0, count, g,
           dst);
  };
  if (groups == 1) {
    float *cols = col, *tmp = col + CRS * N * P;
    columns(0, N, 0, cols);
    if (int rc = gemm(false, false, K, N * P, CRS, 1.f, w, cols, 0.f, tmp))
      return rc;
#pragma omp parallel for collapse(2) if (N * K * P > kParallelGrain)
    for (int64_t n = 0; n < N; ++n)
      for (int64_t k = 0; k < K; ++k) {
        const float *src = tmp + k * N * P + n * P;
        float *dst = out + (n * K + k) * P;
        float b = bias ? bias[k] : 0.f;
#pragma omp simd
        for (int64_t p = 0; p < P; ++p)
          dst[p] = src[p] + b;
      }
    return 0;
  }
  for (int64_t n = 0; n < N; ++n)
    for (int64_t g = 0; g < groups; ++g) {
      columns(n, 1, g, col);
      float *dst = out + (n * K + g * Kg) * P;
      if (bias)
        for (int64_t k = 0; k < Kg; ++k)
          for (int64_t p = 0; p < P; ++p)
            dst[k * P + p] = bias[g * Kg + k];
      if (int rc = gemm(false, false, Kg, P, CRS, 1.f, w + g * Kg * CRS, col,
                        bias ? 1.f : 0.f, dst))
        return rc;
    }
  return 0;
}

// out[idx] = in[idx . s]: materializes a broadcast (s has 0 on broadcast dims).
// A row of the last dim at a time: its input offset computed once, then a
// copy, a fill (a broadcast last dim) or a strided read.
template <class T>
inline void broadcast_copy(T *out, const T *in, const int64_t *s,
                           const int64_t *shape, int rank) {
  int64_t n = 1;
  for (int d = 0; d < rank; ++d)
    n *= shape[d];
  if (rank == 0 || n == 0) {
    if (n)
      out[0] = in[0];
    return;
  }
  const int64_t inner = shape[rank - 1], rows = n / inner, si = s[rank - 1];
#pragma omp parallel for if (n > kParallelGrain)
  for (int64_t r = 0; r < rows; ++r) {
    int64_t rem = r, off = 0;
    for (int d = rank - 2; d >= 0; --d) {
      off += (rem % shape[d]) * s[d];
      rem /= shape[d];
    }
    T *dst = out + r * inner;
    const T *src = in + off;
    if (si == 1)
      std::memcpy(dst, src, size_t(inner) * sizeof(T));
    else if (si == 0)
      std::fill(dst, dst + inner, src[0]);
    else
      for (int64_t i = 0; i < inner; ++i)
        dst[i] = src[i * si];
  }
}

// out[idx] = in[idx . s] * scale: broadcasts `in` over `shape`.
inline void expand(float *out, const float *in, const int64_t *s,
                   const int64_t *shape, int rank, float scale) {
  broadcast_copy(out, in, s, shape, rank);
  if (scale == 1.f)
    return;
  int64_t n = 1;
  for (int d = 0; d < rank; ++d)
    n *= shape[d];
#pragma omp parallel for simd if (n > kParallelGrain)
  for (int64_t i = 0; i < n; ++i)
    out[i] *= scale;
}

// Elements start, start + step, ... (len of them) of the middle dim of an
// (outer, n, inner) tensor, into a dense (outer, len, inner) one. A unit
// step copies one run per outer index (a slice of the last dim has inner 1:
// a copy per element would be one memcpy call per element).
template <class T>
inline void slice_copy(T *out, const T *in, int64_t outer, int64_t n,
                       int64_t inner, int64_t start, int64_t step,
                       int64_t len) {
  if (step == 1) {
#pragma omp parallel for if (outer * len * inner > kParallelGrain)
    for (int64_t o = 0; o < outer; ++o)
      std::memcpy(out + o * len * inner, in + (o * n + start) * inner,
                  size_t(len * inner) * sizeof(T));
    return;
  }
  if (inner == 1) {
#pragma omp parallel for if (outer * len > kParallelGrain)
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t j = 0; j < len; ++j)
        out[o * len + j] = in[o * n + start + j * step];
    return;
  }
#pragma omp parallel for if (outer * len * inner > kParallelGrain)
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < len; ++j)
      std::memcpy(out + (o * len + j) * inner,
                  in + (o * n + start + j * step) * inner,
                  size_t(inner) * sizeof(T));
}

// Writes a dense (outer, len, inner) tensor at [start, start + len) of the
// middle dim of an (outer, n, inner) one: one operand of a cat.
template <class T>
inline void place(T *out, const T *in, int64_t outer, int64_t n, int64_t inner,
                  int64_t start, int64_t len) {
#pragma omp parallel for if (outer * len * inner > kParallelGrain)
  for (int64_t o = 0; o < outer; ++o)
    std::memcpy(out + (o * n + start) * inner, in + o * len * inner,
                size_t(len * inner) * sizeof(T));
}

template <class T>
inline void arange(T *out, int64_t n, double start, double step) {
  for (int64_t i = 0; i < n; ++i)
    out[i] = T(start + double(i) * step);
}

// out[idx] = c[idx . cs] ? a[idx . as] : b[idx . bs] over `shape` (where.self);
// strides are 0 on broadcast dims.
template <class TO, class TA, class TB>
inline void where(TO *out, const bool *c, const int64_t *cs, const TA *a,
                  const int64_t *as, const TB *b, const int64_t *bs,
                  const int64_t *shape, int rank) {
  int64_t n = 1;
  for (int d = 0; d < rank; ++d)
    n *= shape[d];
  if (rank == 0) {
    if (n)
      out[0] = c[0] ? TO(a[0]) : TO(b[0]);
    return;
  }
  // Rows of the last dim: the offsets are computed once per row (the
  // divisions cost more than the select).
  const int64_t inner = shape[rank - 1], rows = inner ? n / inner : 0;
  const int64_t ci = cs[rank - 1], ai = as[rank - 1], bi = bs[rank - 1];
#pragma omp parallel for if (n > kParallelGrain)
  for (int64_t r = 0; r < rows; ++r) {
    int64_t rem = r, co = 0, ao = 0, bo = 0;
    for (int d = rank - 2; d >= 0; --d) {
      int64_t idx = rem % shape[d];
      rem /= shape[d];
      co += idx * cs[d];
      ao += idx * as[d];
      bo += idx * bs[d];
    }
    TO *o = out + r * inner;
    for (int64_t j = 0; j < inner; ++j)
      o[j] = c[co + j * ci] ? TO(a[ao + j * ai]) : TO(b[bo + j * bi]);
  }
}

// Index of the largest (max) or smallest element along the middle dim of an
// (outer, n, inner) tensor: the first one on ties, and the first NaN if there
// is one (ATen's argmax/argmin). n == 0 fails the call (code 3).
template <class T>
inline int argreduce(int64_t *out, const T *in, int64_t outer, int64_t n,
                     int64_t inner, bool max) {
  if (n == 0 && outer * inner > 0)
    return 3;
#pragma omp parallel for if (outer * n * inner > kParallelGrain)
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < inner; ++j) {
      const T *p = in + o * n * inner + j;
      int64_t best = 0;
      T bv = p[0];
      for (int64_t k = 1; k < n && bv == bv; ++k) {
        T v = p[k * inner];
        if (v != v || (max ? v > bv : v < bv)) {
          best = k;
          bv = v;
        }
      }
      out[o * inner + j] = best;
    }
  return 0;
}

// Batch-head b's attention probabilities into `sc` (L x S): softmax over the
// keys of scale * q k^T plus the mask, keys past a causal row's limit and
// rows whose every key is masked out 0 (operands as attention's, below);
// `lse` (may be null): each row's log-sum-exp (-inf where every key is
// masked out).
inline int attention_probabilities(float *sc, const float *q, const float *k,
                                   int64_t b, int64_t L, int64_t S, int64_t E,
                                   double scale, bool causal, const float *mask,
                                   const int64_t *ms, int64_t heads,
                                   int64_t group, float *lse = nullptr) {
  int rc = gemm(false, true, L, S, E, float(scale), q + b * L * E,
                k + (b / group) * S * E, 0.f, sc);
  for (int64_t i = 0; i < L; ++i) {
    float *row = sc + i * S;
    // Causal as in torch's scaled_dot_product_attention: the mask is
    // ones(L, S).tril(), so query i sees keys 0..i.
    int64_t visible = causal ? std::min(S, i + 1) : S;
    if (mask) {
      const float *mr =
          mask + (b / heads) * ms[0] + (b % heads) * ms[1] + i * ms[2];
      for (int64_t j = 0; j < visible; ++j)
        row[j] += mr[j * ms[3]];
    }
    float m = -INFINITY;
    for (int64_t j = 0; j < visible; ++j)
      m = std::max(m, row[j]);
    if (m == -INFINITY) { // every key masked out: no weight anywhere
      std::fill(row, row + S, 0.f);
      if (lse)
        lse[i] = -INFINITY;
      continue;
    }
    vmap(row, row, visible, [m](vf x) { return vexp(x - m); });
    double sum = 0;
    for (int64_t j = 0; j < visible; ++j)
      sum += row[j];
    if (lse)
      lse[i] = float(m + std::log(sum));
    float inv = sum > 0 ? float(1.0 / sum) : 0.f;
    for (int64_t j = 0; j < visible; ++j)
      row[j] *= inv;
    for (int64_t j = visible; j < S; ++j)
      row[j] = 0.f;
  }
  return rc;
}

// Scaled dot-product attention over (batch * heads) independent (L, E) x
// (S, E) problems: softmax(q k^T * scale [+ causal mask]) v. `scores` is
// scratch of batchHeads * L * S floats.
// `mask` (may be null): an additive float mask read at element strides
// ms[0..3] over (batch, head, query, key), 0 on broadcast dims; `heads` splits
// batchHeads into batch and head. Grouped-query attention: `group` query
// heads share one key/value head (k and v hold batchHeads / group heads;
// batch-head b reads key/value head b / group, as torch's enable_gqa does).
// `lse` (may be null): batchHeads x L log-sum-exps of the rows (what a
// training graph saves for the backward).
inline int attention(float *out, const float *q, const float *k, const float *v,
                     int64_t batchHeads, int64_t L, int64_t S, int64_t E,
                     int64_t Ev, double scale, bool causal, float *scores,
                     const float *mask = nullptr, const int64_t *ms = nullptr,
                     int64_t heads = 1, int64_t group = 1,
                     float *lse = nullptr) {
  int rc = 0;
#pragma omp parallel for if (batchHeads > 1) reduction(max : rc)
  for (int64_t b = 0; b < batchHeads; ++b) {
    float *sc = scores + b * L * S;
    rc = std::max(rc, attention_probabilities(sc, q, k, b, L, S, E, scale,
                                              causal, mask, ms, heads, group,
                                              lse ? lse + b * L : nullptr));
    rc = std::max(rc, gemm(false, false, L, Ev, S, 1.f, sc,
                           v + (b / group) * S * Ev, 0.f, out + b * L * Ev));
  }
  return rc;
}

// Eval-mode batch norm over dim 1 of an (N, C, inner) tensor; weight, bias
// may be null.
inline void batch_norm(float *out, const float *in, const float *mean,
                       const float *var, const float *weight, const float *bias,
                       int64_t N, int64_t C, int64_t inner, double eps) {
#pragma omp parallel for collapse(2) if (N * C * inner > kParallelGrain)
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c) {
      float scale =
          float((weight ? weight[c] : 1.0) / std::sqrt(double(var[c]) + eps));
      float shift = (bias ? bias[c] : 0.f) - mean[c] * scale;
      const float *src = in + (n * C + c) * inner;
      float *dst = out + (n * C + c) * inner;
#pragma omp simd
      for (int64_t i = 0; i < inner; ++i)
        dst[i] = src[i] * scale + shift;
    }
}

// 2-D max pooling, NCHW (planes = N * C). Padding counts as -inf.
inline void max_pool2d(float *out, const float *in, int64_t planes, int64_t H,
                       int64_t W, int64_t OH, int64_t OW, int64_t kh,
                       int64_t kw, int64_t sh, int64_t sw, int64_t ph,
                       int64_t pw, int64_t dh, int64_t dw) {
  // Without padding every window lies inside the input: no bounds checks.
  bool inside = ph == 0 && pw == 0 && (OH - 1) * sh + (kh - 1) * dh < H &&
                (OW - 1) * sw + (kw - 1) * dw < W;
#pragma omp parallel for if (planes * OH * OW * kh * kw > kParallelGrain)
  for (int64_t p = 0; p < planes; ++p) {
    const float *plane = in + p * H * W;
    float *dst = out + p * OH * OW;
    if (inside && kh == 2 && kw == 2 && sh == 2 && sw == 2 && dh == 1 &&
        dw == 1) {
      // The common 2x2/2 window: two input rows per output row, vectorizable.
      for (int64_t oh = 0; oh < OH; ++oh) {
        const float *r0 = plane + 2 * oh * W, *r1 = r0 + W;
        float *d = dst + oh * OW;
        bool nan = false;
#pragma omp simd reduction(| : nan)
        for (int64_t ow = 0; ow < OW; ++ow) {
          float a = r0[2 * ow], b = r0[2 * ow + 1], c = r1[2 * ow],
                e = r1[2 * ow + 1];
          d[ow] = std::max(std::max(a, b), std::max(c, e));
          nan |= (a != a) | (b != b) | (c != c) | (e != e);
        }
        if (nan) // rare: redo the row with NaN propagation
          for (int64_t ow = 0; ow < OW; ++ow) {
            float w4[4] = {r0[2 * ow], r0[2 * ow + 1], r1[2 * ow],
                           r1[2 * ow + 1]};
            for (float v : w4)
              if (v != v)
                d[ow] = v;
          }
      }
      continue;
    }
    if (inside) {
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          const float *win = plane + oh * sh * W + ow * sw;
          // Branch-free max (data-dependent branches mispredict); a NaN in
          // the window makes the result NaN, as in PyTorch.
          float m = win[0];
          bool nan = false;
          for (int64_t i = 0; i < kh; ++i)
            for (int64_t j = 0; j < kw; ++j) {
              float v = win[i * dh * W + j * dw];
              m = std::max(m, v);
              nan |= v != v;
            }
          dst[oh * OW + ow] = nan ? NAN : m;
        }
      continue;
    }
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow) {
        float m = -INFINITY;
        for (int64_t i = 0; i < kh; ++i) {
          int64_t ih = oh * sh - ph + i * dh;
          if (ih < 0 || ih >= H)
            continue;
          for (int64_t j = 0; j < kw; ++j) {
            int64_t iw = ow * sw - pw + j * dw;
            if (iw < 0 || iw >= W)
              continue;
            float v = plane[ih * W + iw];
            m = (v > m || v != v) ? v : m;
          }
        }
        dst[oh * OW + ow] = m;
      }
  }
}

// Layer norm over the last `n` elements of each of `rows` rows (two passes,
// double accumulators); weight, bias may be null.
inline void layer_norm(float *out, const float *in, const float *weight,
                       const float *bias, int64_t rows, int64_t n, double eps) {
#pragma omp parallel for if (rows * n > kParallelGrain)
  for (int64_t r = 0; r < rows; ++r) {
    const float *x = in + r * n;
    float *y = out + r * n;
    double sum = 0;
    for (int64_t i = 0; i < n; ++i)
      sum += x[i];
    double mean = n ? sum / n : 0, sq = 0;
    for (int64_t i = 0; i < n; ++i)
      sq += (x[i] - mean) * (x[i] - mean);
    float rstd = float(1.0 / std::sqrt((n ? sq / n : 0) + eps)),
          m = float(mean);
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) {
      float v = (x[i] - m) * rstd;
      y[i] = v * (weight ? weight[i] : 1.f) + (bias ? bias[i] : 0.f);
    }
  }
}

// Reduces the middle dim of an (outer, n, inner) tensor: kind 0 sum, 1 mean,
// 2 max, 3 min, 4 product, into `Out` (a sum of bool or int32 is int64, a sum with a
// dtype is that type). Floating sums and means accumulate in double, integer
// ones in int64 (exact, wrapping as ATen's); max/min propagate NaN, as torch
// does.
template <typename Out, typename In>
void reduce(Out *out, const In *in, int64_t outer, int64_t n, int64_t inner,
            int kind) {
  using Acc = std::conditional_t<std::is_integral_v<Out>, int64_t, double>;
  bool extremum = kind == 2 || kind == 3;
  Acc init = kind == 4 ? 1 : 0;
  if (kind == 2)
    init = std::is_integral_v<In> ? Acc(std::numeric_limits<In>::lowest())
                                  : Acc(-INFINITY);
  else if (kind == 3)
    init = std::is_integral_v<In> ? Acc(std::numeric_limits<In>::max())
                                  : Acc(INFINITY);
  auto pick = [kind](Acc a, Acc x) {
    if (x != x)
      return x;
    return kind == 2 ? (x > a ? x : a) : (x < a ? x : a);
  };
  auto result = [kind, n](Acc acc) {
    return kind == 1 ? Out(double(acc) / double(n)) : Out(acc);
  };
  if (inner == 1) {
#pragma omp parallel for if (outer * n > kParallelGrain)
    for (int64_t o = 0; o < outer; ++o) {
      const In *x = in + o * n;
      Acc acc = init;
      if (extremum) {
        for (int64_t k = 0; k < n; ++k)
          acc = pick(acc, Acc(x[k]));
      } else if (kind == 4) {
        for (int64_t k = 0; k < n; ++k)
          acc *= Acc(x[k]);
      } else {
#pragma omp simd reduction(+ : acc)
        for (int64_t k = 0; k < n; ++k)
          acc += Acc(x[k]);
      }
      out[o] = result(acc);
    }
    return;
  }
#pragma omp parallel if (outer * n * inner > kParallelGrain)
  {
    std::vector<Acc> acc(inner);
#pragma omp for
    for (int64_t o = 0; o < outer; ++o) {
      std::fill(acc.begin(), acc.end(), init);
      for (int64_t k = 0; k < n; ++k) {
        const In *x = in + (o * n + k) * inner;
        if (extremum)
          for (int64_t i = 0; i < inner; ++i)
            acc[i] = pick(acc[i], Acc(x[i]));
        else if (kind == 4)
          for (int64_t i = 0; i < inner; ++i)
            acc[i] *= Acc(x[i]);
        else
#pragma omp simd
          for (int64_t i = 0; i < inner; ++i)
            acc[i] += Acc(x[i]);
      }
      for (int64_t i = 0; i < inner; ++i)
        out[o * inner + i] = result(acc[i]);
    }
  }
}

// Softmax (or log-softmax) along the middle dim of an (outer, n, inner)
// tensor.
inline void softmax(float *out, const float *in, int64_t outer, int64_t n,
                    int64_t inner, bool log) {
  if (inner == 1) {
    // Rows are contiguous: vectorized exp (log-softmax too: y holds the
    // exponentials until the log-sum-exp is known).
#pragma omp parallel for if (outer * n > kParallelGrain)
    for (int64_t o = 0; o < outer; ++o) {
      const float *x = in + o * n;
      float *y = out + o * n;
      // The max and the sum as vector reductions (a NaN anywhere makes the
      // row NaN, as ATen's); the sum in f32 lanes, as ATen's vectorized
      // kernel adds.
      float m = -INFINITY;
      bool nan = false;
#pragma omp simd reduction(max : m) reduction(| : nan)
      for (int64_t k = 0; k < n; ++k) {
        m = x[k] > m ? x[k] : m;
        nan |= x[k] != x[k];
      }
      if (nan)
        m = NAN;
      vmap(y, x, n, [m](vf v) { return vexp(v - m); });
      float sum = 0;
#pragma omp simd reduction(+ : sum)
      for (int64_t k = 0; k < n; ++k)
        sum += y[k];
      if (log) {
        const float lse = m + float(std::log(sum));
#pragma omp simd
        for (int64_t k = 0; k < n; ++k)
          y[k] = x[k] - lse;
        continue;
      }
      float inv = float(1.0 / sum);
#pragma omp simd
      for (int64_t k = 0; k < n; ++k)
        y[k] *= inv;
    }
    return;
  }
#pragma omp parallel for collapse(2) if (outer * n * inner > kParallelGrain)
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      const float *x = in + o * n * inner + i;
      float *y = out + o * n * inner + i;
      float m = -INFINITY;
      for (int64_t k = 0; k < n; ++k)
        m = std::max(m, x[k * inner]);
      double sum = 0;
      for (int64_t k = 0; k < n; ++k)
        sum += std::exp(double(x[k * inner] - m));
      if (log) {
        float lse = m + float(std::log(sum));
        for (int64_t k = 0; k < n; ++k)
          y[k * inner] = x[k * inner] - lse;
      } else {
        float inv = float(1.0 / sum);
        for (int64_t k = 0; k < n; ++k)
          y[k * inner] = std::exp(x[k * inner] - m) * inv;
      }
    }
}

// Softmax (or log-softmax) in f64 along the middle dim of an (outer, n,
// inner) tensor (the f32 kernel above is the vectorized one).
inline void softmax(double *out, const double *in, int64_t outer, int64_t n,
                    int64_t inner, bool log) {
#pragma omp parallel for collapse(2) if (outer * n * inner > kParallelGrain)
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      const double *x = in + o * n * inner + i;
      double *y = out + o * n * inner + i;
      double m = -INFINITY;
      bool nan = false;
      for (int64_t k = 0; k < n; ++k) {
        m = std::max(m, x[k * inner]);
        nan |= x[k * inner] != x[k * inner];
      }
      if (nan)
        m = NAN;
      double sum = 0;
      for (int64_t k = 0; k < n; ++k)
        sum += std::exp(x[k * inner] - m);
      for (int64_t k = 0; k < n; ++k)
        y[k * inner] = log ? x[k * inner] - m - std::log(sum)
                           : std::exp(x[k * inner] - m) / sum;
    }
}

// Copies elements [start, start + len) of the middle dim of an
// (outer, n, inner) tensor into a dense (outer, len, inner) one.
template <class T>
inline void slice(T *out, const T *in, int64_t outer, int64_t n, int64_t inner,
                  int64_t start, int64_t len) {
#pragma omp parallel for if (outer * len * inner > kParallelGrain)
  for (int64_t o = 0; o < outer; ++o)
    std::memcpy(out + o * len * inner, in + (o * n + start) * inner,
                size_t(len * inner) * sizeof(T));
}

inline float gelu(float x) {
  return 0.5f * x * (1.0f + std::erf(x * 0.70710678118654752f));
}
inline float gelu_tanh(float x) {
  return 0.5f * x *
         (1.0f + std::tanh(0.79788456080286536f * (x + 0.044715f * x * x * x)));
}

} // namespace dynoc_k
