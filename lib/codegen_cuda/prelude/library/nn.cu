// nn.cu - layer norm, softmax, reductions and attention as
// one-pass block/warp kernels. Each reads and writes its tensors' own types
// (f32, bf16, f16) and computes in f32, so a bf16 graph rounds each result
// once, as ATen's CUDA kernels do. Part of the kernel library
// (dynoc_cuda_library.cuh).
#include "dynoc_cuda_core.cuh"

namespace dynoc_k {

__device__ inline float warpSum(float v) {
  for (int o = 16; o > 0; o >>= 1)
    v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}
__device__ inline float warpMax(float v) {
  for (int o = 16; o > 0; o >>= 1)
    v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}
// A block-wide reduction; every thread gets the result. `shared` holds 32.
template <bool kMax>
__device__ inline float blockReduce(float v, float *shared) {
  v = kMax ? warpMax(v) : warpSum(v);
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  __syncthreads(); // `shared` may still be read by an earlier reduction
  if (lane == 0)
    shared[warp] = v;
  __syncthreads();
  int warps = (blockDim.x + 31) >> 5;
  v = lane < warps ? shared[lane] : (kMax ? -INFINITY : 0.f);
  return kMax ? warpMax(v) : warpSum(v);
}

// One block per row: mean and variance in one pass over registers-or-cache,
// then the normalized row.
template <class T, class TW>
__global__ void layerNormKernel(T *out, const T *in, const TW *w, const TW *b,
                                int64_t n, float eps) {
  __shared__ float shared[32];
  const T *x = in + blockIdx.x * n;
  T *y = out + blockIdx.x * n;
  float sum = 0.f;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x)
    sum += float(x[i]);
  float mean = blockReduce<false>(sum, shared) / float(n);
  float sq = 0.f;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
    float d = float(x[i]) - mean;
    sq += d * d;
  }
  float rstd = rsqrtf(blockReduce<false>(sq, shared) / float(n) + eps);
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x)
    y[i] = T((float(x[i]) - mean) * rstd * (w ? float(w[i]) : 1.f) +
             (b ? float(b[i]) : 0.f));
}
inline int rowThreads(int64_t n) {
  return n >= 1024 ? 512 : n >= 256 ? 256 : n >= 128 ? 128 : 64;
}
template <class T, class TW>
void layer_norm(T *out, const T *in, const TW *weight, const TW *bias,
                int64_t rows, int64_t n, double eps) {
  if (rows == 0)
    return;
  layerNormKernel<<<unsigned(rows), rowThreads(n), 0, stream()>>>(
      out, in, weight, bias, n, float(eps));
  check(cudaGetLastError(), "layer_norm kernel");
}

// Softmax over the middle dim of (outer, n, inner): a block per row when
// inner is 1, else a thread per (outer, inner) column.
template <bool kLog, class T>
__global__ void softmaxRowKernel(T *out, const T *in, int64_t n) {
  __shared__ float shared[32];
  const T *x = in + blockIdx.x * n;
  T *y = out + blockIdx.x * n;
  float m = -INFINITY;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x)
    m = fmaxf(m, float(x[i]));
  m = blockReduce<true>(m, shared);
  float sum = 0.f;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x)
    sum += __expf(float(x[i]) - m);
  sum = blockReduce<false>(sum, shared);
  if (kLog) {
    float lse = m + logf(sum);
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x)
      y[i] = T(float(x[i]) - lse);
  } else {
    float inv = 1.f / sum;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x)
      y[i] = T(__expf(float(x[i]) - m) * inv);
  }
}
template <class T>
void softmax(T *out, const T *in, int64_t outer, int64_t n, int64_t inner,
             bool log) {
  if (outer * inner == 0)
    return;
  if (inner == 1) {
    if (log)
      softmaxRowKernel<true>
          <<<unsigned(outer), rowThreads(n), 0, stream()>>>(out, in, n);
    else
      softmaxRowKernel<false>
          <<<unsigned(outer), rowThreads(n), 0, stream()>>>(out, in, n);
    check(cudaGetLastError(), "softmax kernel");
    return;
  }
  pointwise(outer * inner, [=] __device__(int64_t c) {
    const T *x = in + (c / inner) * n * inner + c % inner;
    T *y = out + (c / inner) * n * inner + c % inner;
    float m = -INFINITY, sum = 0.f;
    for (int64_t k = 0; k < n; ++k)
      m = fmaxf(m, float(x[k * inner]));
    for (int64_t k = 0; k < n; ++k)
      sum += expf(float(x[k * inner]) - m);
    for (int64_t k = 0; k < n; ++k)
      y[k * inner] = T(log ? float(x[k * inner]) - m - logf(sum)
                           : expf(float(x[k * inner]) - m) / sum);
  });
}

// Reduces the middle dim of (outer, n, inner): kind 0 sum, 1 mean, 2 max,
// 3 min; max/min propagate NaN, as torch does.
__device__ inline float reducePick(int kind, float a, float x) {
  if (kind < 2)
    return a + x;
  if (x != x || a != a)
    return x != x ? x : a;
  return kind == 2 ? fmaxf(a, x) : fminf(a, x);
}
template <class T>
__global__ void reduceRowKernel(T *out, const T *in, int64_t n, int kind) {
  __shared__ float shared[32];
  const T *x = in + blockIdx.x * n;
  float init = kind == 2 ? -INFINITY : kind == 3 ? INFINITY : 0.f;
  float a = init;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x)
    a = reducePick(kind, a, float(x[i]));
  if (kind < 2) {
    a = blockReduce<false>(a, shared);
  } else {
    // NaN first: a block max/min that saw one returns it.
    float nan = blockReduce<true>(a != a ? 1.f : 0.f, shared);
    a = kind == 2 ? blockReduce<true>(a, shared)
                  : -blockReduce<true>(-a, shared);
    if (nan > 0.f)
      a = NAN;
  }
  if (threadIdx.x == 0)
    out[blockIdx.x] = T(kind == 1 ? a / float(n) : a);
}
template <class T>
void reduce(T *out, const T *in, int64_t outer, int64_t n, int64_t inner,
            int kind) {
  if (outer * inner == 0)
    return;
  if (inner == 1) {
    reduceRowKernel<<<unsigned(outer), rowThreads(n), 0, stream()>>>(out, in, n,
                                                                     kind);
    check(cudaGetLastError(), "reduction kernel");
    return;
  }
  pointwise(outer * inner, [=] __device__(int64_t c) {
    const T *x = in + (c / inner) * n * inner + c % inner;
    float a = kind == 2 ? -INFINITY : kind == 3 ? INFINITY : 0.f;
    for (int64_t k = 0; k < n; ++k)
      a = reducePick(kind, a, float(x[k * inner]));
    out[c] = T(kind == 1 ? a / float(n) : a);
  });
}

// Scaled dot-product attention, flash style: one warp per query row streams
// over the keys 32 at a time (a lane per key for the scores, then every lane
// accumulates its share of the value dims) with an online softmax; nothing
// of size L x S is written. Value dims up to 256. Grouped-query heads:
// `group` query heads share one key/value head (batch-head b reads key/value
// head b / group, as torch's enable_gqa does).
constexpr int kAttnMaxDims = 256;
template <class T, class TM>
__global__ void attentionKernel(T *out, const T *q, const T *k, const T *v,
                                int64_t batchHeads, int64_t L, int64_t S,
                                int64_t E, int64_t Ev, float scale, bool causal,
                                const TM *mask, Arr8 ms, int64_t heads,
                                int64_t group) {
  int lane = threadIdx.x & 31;
  int64_t row = blockIdx.x * int64_t(blockDim.x >> 5) + (threadIdx.x >> 5);
  if (row >= batchHeads * L)
    return;
  int64_t b = row / L, i = row % L;
  const T *qi = q + row * E;
  const T *kb = k + (b / group) * S * E, *vb = v + (b / group) * S * Ev;
  constexpr int kPer = kAttnMaxDims / 32;
  float acc[kPer];
#pragma unroll
  for (int t = 0; t < kPer; ++t)
    acc[t] = 0.f;
  float m = -INFINITY, sum = 0.f;
  int64_t visible = causal ? (i + 1 < S ? i + 1 : S) : S;
  const TM *mr =
      mask ? mask + (b / heads) * ms[0] + (b % heads) * ms[1] + i * ms[2]
           : nullptr;
  for (int64_t j0 = 0; j0 < visible; j0 += 32) {
    int64_t j = j0 + lane;
    float s = -INFINITY;
    if (j < visible) {
      const T *kj = kb + j * E;
      float dot = 0.f;
      for (int64_t e = 0; e < E; ++e)
        dot += float(qi[e]) * float(kj[e]);
      s = dot * scale + (mr ? float(mr[j * ms[3]]) : 0.f);
    }
    float mNew = fmaxf(m, warpMax(s));
    if (mNew == -INFINITY)
      continue; // every key so far masked out
    float p = s == -INFINITY ? 0.f : __expf(s - mNew);
    float correction = m == -INFINITY ? 0.f : __expf(m - mNew);
    sum = sum * correction + warpSum(p);
#pragma unroll
    for (int t = 0; t < kPer; ++t)
      acc[t] *= correction;
    int64_t count = visible - j0 < 32 ? visible - j0 : 32;
    for (int64_t jj = 0; jj < count; ++jj) {
      float pj = __shfl_sync(0xffffffffu, p, int(jj));
      const T *vj = vb + (j0 + jj) * Ev;
#pragma unroll
      for (int t = 0; t < kPer; ++t) {
        int64_t d = lane + 32 * t;
        if (d < Ev)
          acc[t] += pj * float(vj[d]);
      }
    }
    m = mNew;
  }
  float inv = sum > 0.f ? 1.f / sum : 0.f; // every key masked: zeros
  T *o = out + row * Ev;
#pragma unroll
  for (int t = 0; t < kPer; ++t) {
    int64_t d = lane + 32 * t;
    if (d < Ev)
      o[d] = T(acc[t] * inv);
  }
}
template <class T, class TM>
int attention(T *out, const T *q, const T *k, const T *v, int64_t batchHeads,
              int64_t L, int64_t S, int64_t E, int64_t Ev, double scale,
              bool causal, void *scores, const TM *mask, const int64_t *ms,
              int64_t heads, int64_t group) {
  (void)scores; // the CPU kernel's L x S scratch; not needed here
  if (Ev > kAttnMaxDims) {
    fail(400, "attention", "value head dim over 256");
    return 400;
  }
  int64_t rows = batchHeads * L;
  if (rows == 0)
    return 0;
  constexpr int kWarps = 4;
  attentionKernel<<<unsigned((rows + kWarps - 1) / kWarps), 32 * kWarps, 0,
                    stream()>>>(out, q, k, v, batchHeads, L, S, E, Ev,
                                float(scale), causal, mask, Arr8(ms, 4), heads,
                                group);
  check(cudaGetLastError(), "attention kernel");
  return 0;
}

// nll_loss_forward in one block: reduction 0 writes each row's loss;
// 1 and 2 sum the picked log-probabilities (and their weights) in f32 and
// one thread writes the loss and the total weight.
template <class T>
__global__ void nllLossKernel(T *out, T *totalWeight, const T *in,
                              const int64_t *target, const T *weight,
                              int64_t N, int64_t C, int reduction,
                              int64_t ignoreIndex) {
  __shared__ float shared[32];
  float sum = 0.f, wsum = 0.f;
  for (int64_t i = threadIdx.x; i < N; i += blockDim.x) {
    const int64_t t = target[i];
    float loss = 0.f, w = 0.f;
    if (t != ignoreIndex) {
      if (t < 0 || t >= C) {
        loss = NAN; // out of range: no device-side abort, a NaN loss
        w = 1.f;
      } else {
        w = weight ? float(weight[t]) : 1.f;
        loss = -float(in[i * C + t]) * w;
      }
    }
    if (reduction == 0)
      out[i] = T(loss);
    sum += loss;
    wsum += w;
  }
  if (reduction == 0)
    return;
  sum = blockReduce<false>(sum, shared);
  wsum = blockReduce<false>(wsum, shared);
  if (threadIdx.x == 0) {
    // A mean over no target is 0/0 = NaN, as ATen's.
    out[0] = T(reduction == 1 ? sum / wsum : sum);
    if (totalWeight)
      totalWeight[0] = T(wsum);
  }
}
template <class T>
int nll_loss(T *out, T *totalWeight, const T *in, const int64_t *target,
             const T *weight, int64_t N, int64_t C, int reduction,
             int64_t ignoreIndex) {
  if (reduction == 0 && N == 0)
    return 0;
  nllLossKernel<<<1, 1024, 0, stream()>>>(out, totalWeight, in, target, weight,
                                          N, C, reduction, ignoreIndex);
  check(cudaGetLastError(), "nll_loss kernel");
  return 0;
}

// mse_loss: reduction 0 elementwise, else one block summing (a - b)^2 in
// f32 (a loss over a model's outputs: a small tensor).
template <class T>
__global__ void mseLossKernel(T *out, const T *a, const T *b, int64_t n,
                              int reduction) {
  __shared__ float shared[32];
  float sum = 0.f;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
    const float d = float(a[i]) - float(b[i]);
    sum += d * d;
  }
  sum = blockReduce<false>(sum, shared);
  if (threadIdx.x == 0)
    out[0] = T(reduction == 1 ? sum / float(n) : sum);
}
template <class T>
void mse_loss(T *out, const T *a, const T *b, int64_t n, int reduction) {
  if (reduction == 0) {
    pointwise(n, [=] __device__(int64_t i) {
      const float d = float(a[i]) - float(b[i]);
      out[i] = T(d * d);
    });
    return;
  }
  mseLossKernel<<<1, 1024, 0, stream()>>>(out, a, b, n, reduction);
  check(cudaGetLastError(), "mse_loss kernel");
}

#define DYNOC_LAYER_NORM(T, TW)                                                \
  template void layer_norm<T, TW>(T *, const T *, const TW *, const TW *,      \
                                  int64_t, int64_t, double);
#define DYNOC_ATTENTION(T, TM)                                                 \
  template int attention<T, TM>(T *, const T *, const T *, const T *, int64_t, \
                                int64_t, int64_t, int64_t, int64_t, double,    \
                                bool, void *, const TM *, const int64_t *,     \
                                int64_t, int64_t);
#define DYNOC_NN(T)                                                            \
  template void softmax<T>(T *, const T *, int64_t, int64_t, int64_t, bool);   \
  template void reduce<T>(T *, const T *, int64_t, int64_t, int64_t, int);     \
  template int nll_loss<T>(T *, T *, const T *, const int64_t *, const T *,    \
                           int64_t, int64_t, int, int64_t);                    \
  template void mse_loss<T>(T *, const T *, const T *, int64_t, int);          \
  DYNOC_LAYER_NORM(T, float)                                                   \
  DYNOC_LAYER_NORM(T, bf16)                                                    \
  DYNOC_LAYER_NORM(T, f16)                                                     \
  DYNOC_ATTENTION(T, float)                                                    \
  DYNOC_ATTENTION(T, bf16)                                                     \
  DYNOC_ATTENTION(T, f16)
// Compiled once per element type (CudaBuild.cpp, kLibraryUnits).
DYNOC_NN(DYNOC_TYPE)

} // namespace dynoc_k
