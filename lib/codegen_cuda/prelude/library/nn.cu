// nn.cu - layer norm, softmax, reductions and attention as
// one-pass block/warp kernels. Each reads and writes its tensors' own types
// (f32, bf16, f16) and computes in f32, so a bf16 graph rounds each result
// once, as ATen's CUDA kernels do. Part of the kernel library
// (dynoc_cuda_library.cuh).
#include "dynoc_cuda_core.cuh"

#include <mma.h>

#include <atomic>

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
// Reduces [begin, end) of each row of `rowLen` elements: block b takes span
// b % spans of row b / spans. A mean divides by `count` (the whole row's
// length: a split row's second pass reduces partial sums).
template <class T, class TI>
__global__ void reduceSpanKernel(T *out, const TI *in, int64_t rowLen,
                                 int64_t span, int64_t spans, int kind,
                                 int64_t count) {
  __shared__ float shared[32];
  const TI *x = in + (blockIdx.x / spans) * rowLen;
  int64_t begin = (blockIdx.x % spans) * span;
  int64_t end = begin + span < rowLen ? begin + span : rowLen;
  float init = kind == 2 ? -INFINITY : kind == 3 ? INFINITY : 0.f;
  float a = init;
  for (int64_t i = begin + threadIdx.x; i < end; i += blockDim.x)
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
    out[blockIdx.x] = T(kind == 1 ? a / float(count) : a);
}

// Reduces k in [begin, end) of column i of (outer, n, inner) for each
// (outer, chunk, inner) of `out`, chunks of `span` rows; a mean divides by
// `count`.
template <class T, class TI>
void reduceColumns(T *out, const TI *in, int64_t outer, int64_t n,
                   int64_t inner, int64_t span, int64_t chunks, int kind,
                   int64_t count) {
  pointwise(outer * chunks * inner, [=] __device__(int64_t c) {
    int64_t i = c % inner, rest = c / inner, chunk = rest % chunks,
            o = rest / chunks;
    const TI *x = in + o * n * inner + i;
    int64_t begin = chunk * span, end = begin + span < n ? begin + span : n;
    float a = kind == 2 ? -INFINITY : kind == 3 ? INFINITY : 0.f;
    for (int64_t k = begin; k < end; ++k)
      a = reducePick(kind, a, float(x[k * inner]));
    out[c] = T(kind == 1 ? a / float(count) : a);
  });
}

// A reduction with little parallelism of its own (a few long rows, as a
// whole-tensor sum or a gradient's norm; few long columns, as a bias
// gradient's sum over the tokens) runs in two passes: the rows (columns)
// split into chunks reduced into f32 partial results, then those reduced,
// in a fixed order (the result does not depend on the schedule).
constexpr int64_t kSplitThreads = 1 << 17; // enough work in flight
constexpr int64_t kRowChunk = 1 << 14, kColumnChunk = 64;

template <class T>
void reduce(T *out, const T *in, int64_t outer, int64_t n, int64_t inner,
            int kind) {
  if (outer * inner == 0)
    return;
  const int partialKind = kind == 1 ? 0 : kind; // a mean's parts are sums
  const bool rows = inner == 1;
  const int64_t lanes = rows ? outer * rowThreads(n) : outer * inner;
  const int64_t chunk = rows ? kRowChunk : kColumnChunk;
  int64_t chunks = lanes < kSplitThreads && n >= 4 * chunk ? (n + chunk - 1) / chunk : 1;
  float *partial = nullptr;
  cudaMemPool_t pool = chunks > 1 ? scratchPool() : nullptr;
  if (pool && cudaMallocFromPoolAsync(reinterpret_cast<void **>(&partial),
                                      size_t(outer * chunks * inner) *
                                          sizeof(float),
                                      pool, stream()) != cudaSuccess) {
    cudaGetLastError(); // out of memory: one pass
    partial = nullptr;
  }
  if (!partial)
    chunks = 1;
  if (rows) {
    if (chunks > 1) {
      reduceSpanKernel<<<unsigned(outer * chunks), 512, 0, stream()>>>(
          partial, in, n, chunk, chunks, partialKind, n);
      reduceSpanKernel<<<unsigned(outer), rowThreads(chunks), 0, stream()>>>(
          out, partial, chunks, chunks, 1, kind, n);
    } else {
      reduceSpanKernel<<<unsigned(outer), rowThreads(n), 0, stream()>>>(
          out, in, n, n, 1, kind, n);
    }
    check(cudaGetLastError(), "reduction kernel");
  } else if (chunks > 1) {
    reduceColumns(partial, in, outer, n, inner, chunk, chunks, partialKind, n);
    reduceColumns(out, partial, outer, chunks, inner, chunks, 1, kind, n);
  } else {
    reduceColumns(out, in, outer, n, inner, n, 1, kind, n);
  }
  if (partial)
    check(cudaFreeAsync(partial, stream()), "reduction scratch");
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
#if DYNOC_HALF_TYPES
// Flash attention on the tensor cores, for bf16/f16 with a head dim (E == Ev)
// of 64 or 128: FlashAttention-2's forward (Dao, 2023) on WMMA 16x16x16
// fragments. A block of 4 warps takes 64 query rows of one batch-head (16 a
// warp) and streams the keys 64 at a time through shared memory: each warp
// computes its 16 x 64 scores on the tensor cores (f32), applies scale, mask
// and causality and the online softmax in f32 (a row at a time, a lane per
// two keys), rounds the weights to T (as ATen's flash kernels do) and adds
// P V to its f32 output rows, kept in shared memory because a WMMA
// accumulator's element-to-row map is opaque (each tile rescales those rows
// first). Rows are padded (kPad) so that neither the fragment loads nor the
// row-wise passes meet bank conflicts. Nothing of size L x S is written;
// memory is linear in the sequence length.
namespace flash {
constexpr int kWarps = 4, kRows = 16 * kWarps, kKeys = 64;
constexpr int kPadH = 8, kPadF = 4; // 16 bytes: 16-bit rows, float rows
template <int D> constexpr size_t smemBytes() {
  return 2 * (size_t(kRows + 2 * kKeys) * (D + kPadH) +
              size_t(kWarps) * 16 * (kKeys + kPadH)) +
         4 * (size_t(kWarps) * 16 * (kKeys + kPadF) +
              size_t(kWarps) * 16 * (D + kPadF));
}
} // namespace flash

template <class T, class TM, int D>
__global__ void __launch_bounds__(32 * flash::kWarps)
    flashAttentionKernel(T *out, const T *q, const T *k, const T *v, int64_t L,
                         int64_t S, float scale, bool causal, const TM *mask,
                         Arr8 ms, int64_t heads, int64_t group) {
  using namespace nvcuda;
  using flash::kKeys;
  using flash::kRows;
  constexpr int LD = D + flash::kPadH;           // Q, K, V rows
  constexpr int LP = kKeys + flash::kPadH;       // P rows
  constexpr int LS = kKeys + flash::kPadF;       // score rows (f32)
  constexpr int LO = D + flash::kPadF;           // output rows (f32)
  extern __shared__ __align__(128) unsigned char smem[];
  T *sQ = reinterpret_cast<T *>(smem);
  T *sK = sQ + kRows * LD, *sV = sK + kKeys * LD;
  T *sP = sV + kKeys * LD;
  float *sS = reinterpret_cast<float *>(sP + flash::kWarps * 16 * LP);
  float *sO = sS + flash::kWarps * 16 * LS;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int64_t bh = blockIdx.y, row0 = int64_t(blockIdx.x) * kRows;
  const T *qb = q + bh * L * D, *kb = k + (bh / group) * S * D,
          *vb = v + (bh / group) * S * D;
  // The block's query rows (zeros past L), 8 elements (16 bytes) a load.
  for (int i = threadIdx.x; i < kRows * D / 8; i += blockDim.x) {
    int r = i / (D / 8), c = (i % (D / 8)) * 8;
    uint4 val = make_uint4(0, 0, 0, 0);
    if (row0 + r < L)
      val = *reinterpret_cast<const uint4 *>(qb + (row0 + r) * D + c);
    *reinterpret_cast<uint4 *>(sQ + r * LD + c) = val;
  }
  float *myS = sS + warp * 16 * LS, *myO = sO + warp * 16 * LO;
  T *myP = sP + warp * 16 * LP;
  for (int i = lane; i < 16 * LO; i += 32)
    myO[i] = 0.f;
  const int64_t wrow0 = row0 + warp * 16; // this warp's first query row
  // Per row of the warp (every lane keeps all 16): running max and sum.
  float m[16], l[16];
#pragma unroll
  for (int r = 0; r < 16; ++r)
    m[r] = -INFINITY, l[r] = 0.f;
  int64_t end = S;
  if (causal)
    end = row0 + kRows < S ? row0 + kRows : S;
  __syncthreads();
  wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::row_major> qa[D / 16];
#pragma unroll
  for (int kk = 0; kk < D / 16; ++kk)
    wmma::load_matrix_sync(qa[kk], sQ + warp * 16 * LD + kk * 16, LD);
  for (int64_t j0 = 0; j0 < end; j0 += kKeys) {
    __syncthreads(); // the previous tile's K and V are no longer read
    for (int i = threadIdx.x; i < kKeys * D / 8; i += blockDim.x) {
      int rr = i / (D / 8), c = (i % (D / 8)) * 8;
      uint4 kv = make_uint4(0, 0, 0, 0), vv = kv;
      if (j0 + rr < S) {
        kv = *reinterpret_cast<const uint4 *>(kb + (j0 + rr) * D + c);
        vv = *reinterpret_cast<const uint4 *>(vb + (j0 + rr) * D + c);
      }
      *reinterpret_cast<uint4 *>(sK + rr * LD + c) = kv;
      *reinterpret_cast<uint4 *>(sV + rr * LD + c) = vv;
    }
    __syncthreads();
    // Causal: a warp whose rows all precede the tile's first key skips it
    // (its rows see none of these keys).
    if (causal && j0 > wrow0 + 15)
      continue;
    // Scores: Q (16 x D) K^T (D x 64), f32 on the tensor cores.
#pragma unroll
    for (int n = 0; n < kKeys / 16; ++n) {
      wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
      wmma::fill_fragment(acc, 0.f);
#pragma unroll
      for (int kk = 0; kk < D / 16; ++kk) {
        wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::col_major> kf;
        wmma::load_matrix_sync(kf, sK + n * 16 * LD + kk * 16, LD);
        wmma::mma_sync(acc, qa[kk], kf, acc);
      }
      wmma::store_matrix_sync(myS + n * 16, acc, LS, wmma::mem_row_major);
    }
    __syncwarp();
    // The online softmax, a row at a time: lane j takes keys j and j + 32.
#pragma unroll
    for (int r = 0; r < 16; ++r) {
      const int64_t qi = wrow0 + r;
      const TM *mr = mask && qi < L ? mask + (bh / heads) * ms[0] +
                                          (bh % heads) * ms[1] + qi * ms[2]
                                    : nullptr;
      float sc[2];
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int c = lane + 32 * h;
        const int64_t j = j0 + c;
        sc[h] = -INFINITY;
        if (qi < L && j < S && !(causal && j > qi))
          sc[h] = myS[r * LS + c] * scale + (mr ? float(mr[j * ms[3]]) : 0.f);
      }
      const float mNew = fmaxf(m[r], warpMax(fmaxf(sc[0], sc[1])));
      const float corr = mNew == -INFINITY ? 1.f : __expf(m[r] - mNew);
      float sum = 0.f;
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const float pv = sc[h] == -INFINITY ? 0.f : __expf(sc[h] - mNew);
        myP[r * LP + lane + 32 * h] = T(pv);
        sum += pv;
      }
      l[r] = l[r] * corr + warpSum(sum);
      m[r] = mNew;
#pragma unroll
      for (int c = lane; c < D; c += 32)
        myO[r * LO + c] *= corr;
    }
    __syncwarp();
    // O += P (16 x 64) V (64 x D).
#pragma unroll
    for (int n = 0; n < D / 16; ++n) {
      wmma::fragment<wmma::accumulator, 16, 16, 16, float> o;
      wmma::load_matrix_sync(o, myO + n * 16, LO, wmma::mem_row_major);
#pragma unroll
      for (int kk = 0; kk < kKeys / 16; ++kk) {
        wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::row_major> pf;
        wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::row_major> vf;
        wmma::load_matrix_sync(pf, myP + kk * 16, LP);
        wmma::load_matrix_sync(vf, sV + kk * 16 * LD + n * 16, LD);
        wmma::mma_sync(o, pf, vf, o);
      }
      wmma::store_matrix_sync(myO + n * 16, o, LO, wmma::mem_row_major);
    }
    __syncwarp();
  }
#pragma unroll
  for (int r = 0; r < 16; ++r) {
    const int64_t qi = wrow0 + r;
    if (qi >= L)
      break;
    const float inv = l[r] > 0.f ? 1.f / l[r] : 0.f; // every key masked: zeros
    T *orow = out + (bh * L + qi) * D;
    for (int c = lane; c < D; c += 32)
      orow[c] = T(myO[r * LO + c] * inv);
  }
}

template <class T, class TM, int D>
int flashAttention(T *out, const T *q, const T *k, const T *v,
                   int64_t batchHeads, int64_t L, int64_t S, float scale,
                   bool causal, const TM *mask, const int64_t *ms,
                   int64_t heads, int64_t group) {
  constexpr size_t bytes = flash::smemBytes<D>();
  // Over 48 KB of shared memory is asked for once per device and kernel.
  static std::atomic<uint64_t> configured{0};
  int device = 0;
  check(cudaGetDevice(&device), "flash attention device");
  const uint64_t bit = uint64_t(1) << (device & 63);
  if (!(configured.load(std::memory_order_relaxed) & bit)) {
    check(cudaFuncSetAttribute(flashAttentionKernel<T, TM, D>,
                               cudaFuncAttributeMaxDynamicSharedMemorySize,
                               int(bytes)),
          "flash attention shared memory");
    configured.fetch_or(bit);
  }
  dim3 grid(unsigned((L + flash::kRows - 1) / flash::kRows),
            unsigned(batchHeads));
  flashAttentionKernel<T, TM, D><<<grid, 32 * flash::kWarps, bytes, stream()>>>(
      out, q, k, v, L, S, scale, causal, mask, Arr8(ms, 4), heads, group);
  check(cudaGetLastError(), "flash attention kernel");
  return 0;
}
#endif

#if DYNOC_CUDNN_SDPA
// cuDNN's fused attention (library/sdpa.cu): true where it ran the problem.
template <class T, class TM>
bool cudnnAttention(T *out, const T *q, const T *k, const T *v,
                    int64_t batchHeads, int64_t L, int64_t S, int64_t E,
                    int64_t Ev, double scale, bool causal, const TM *mask,
                    const int64_t *ms, int64_t heads, int64_t group);
#endif

template <class T, class TM>
int attention(T *out, const T *q, const T *k, const T *v, int64_t batchHeads,
              int64_t L, int64_t S, int64_t E, int64_t Ev, double scale,
              bool causal, void *scores, const TM *mask, const int64_t *ms,
              int64_t heads, int64_t group) {
  (void)scores; // the CPU kernel's L x S scratch; not needed here
#if DYNOC_HALF_TYPES && DYNOC_CUDNN_SDPA
  // cuDNN's flash-attention engines first (torch's own on Hopper); where
  // cuDNN cannot be opened or has no engine for the problem, the kernels
  // below.
  if constexpr (IsHalf<T>::value) {
    if (L > 0 && S > 0 &&
        cudnnAttention<T, TM>(out, q, k, v, batchHeads, L, S, E, Ev, scale,
                              causal, mask, ms, heads, group))
      return 0;
  }
#endif
#if DYNOC_HALF_TYPES
  // The tensor-core kernel where it applies: bf16/f16, equal head dims of 64
  // or 128, 16-byte aligned rows, and a grid of at most 65535 batch-heads.
  if constexpr (IsHalf<T>::value) {
    bool aligned = (reinterpret_cast<uintptr_t>(q) | reinterpret_cast<uintptr_t>(k) |
                    reinterpret_cast<uintptr_t>(v)) % 16 == 0;
    if (E == Ev && aligned && batchHeads <= 65535 && L > 0 && S > 0) {
      if (E == 64)
        return flashAttention<T, TM, 64>(out, q, k, v, batchHeads, L, S,
                                         float(scale), causal, mask, ms, heads,
                                         group);
      if (E == 128)
        return flashAttention<T, TM, 128>(out, q, k, v, batchHeads, L, S,
                                          float(scale), causal, mask, ms, heads,
                                          group);
    }
  }
#endif
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
