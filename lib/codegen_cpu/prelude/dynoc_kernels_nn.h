// dynoc_kernels_nn.h - layer kernels that real training scripts record at the
// dispatcher: nll_loss_forward (cross-entropy), random fills (dropout's
// bernoulli, initializers), an LSTM layer (mkldnn_rnn_layer), transposed
// 2-D convolution, a convolution's weight and bias gradients, and max
// pooling's indices and gradient, an embedding's gradient, attention's
// gradients. Appended to
// dynoc_kernels.h in the embedded prelude (see lib/codegen_cpu/BUILD.bazel), so
// it uses that file's helpers.

namespace dynoc_k {

// GEMMs on f64 and 32/64-bit integers (oneDNN's sgemm is f32 only; 8- and
// 16-bit integers are widened to i32 before they get here): row-major C =
// alpha * op(A) @ op(B) + beta * C, rows in parallel, the k loop outside the j
// loop for unit-stride B. Integers accumulate in int64 and wrap when stored,
// as ATen's do (the low bits of a sum do not depend on the width it is
// summed in).
template <class T>
using exact_gemm_acc =
    std::conditional_t<std::is_integral<T>::value, int64_t, double>;
template <class T, std::enable_if_t<std::is_same<T, double>::value ||
                                        std::is_same<T, int64_t>::value ||
                                        std::is_same<T, int32_t>::value,
                                    int> = 0>
inline int gemm(bool transA, bool transB, int64_t M, int64_t N, int64_t K,
                double alpha, const T *A, const T *B, double beta, T *C) {
  using Acc = exact_gemm_acc<T>;
  const Acc al = Acc(alpha), be = Acc(beta);
#pragma omp parallel for if (M * N * K > kParallelGrain)
  for (int64_t i = 0; i < M; ++i) {
    std::vector<Acc> c(N);
    T *out = C + i * N;
    for (int64_t k = 0; k < K; ++k) {
      const Acc a = Acc(transA ? A[k * M + i] : A[i * K + k]);
      if (transB)
        for (int64_t j = 0; j < N; ++j)
          c[j] += a * Acc(B[j * K + k]);
      else
        for (int64_t j = 0; j < N; ++j)
          c[j] += a * Acc(B[k * N + j]);
    }
    for (int64_t j = 0; j < N; ++j)
      out[j] = T(al * c[j] + (beta == 0 ? Acc(0) : be * Acc(out[j])));
  }
  return 0;
}

template <class T, std::enable_if_t<std::is_same<T, double>::value ||
                                        std::is_same<T, int64_t>::value ||
                                        std::is_same<T, int32_t>::value,
                                    int> = 0>
inline int bmm(int64_t batch, int64_t M, int64_t N, int64_t K, const T *A,
               int64_t sa, const T *B, int64_t sb, T *C) {
  for (int64_t b = 0; b < batch; ++b)
    gemm(false, false, M, N, K, 1.0, A + b * sa, B + b * sb, 0.0,
         C + b * M * N);
  return 0;
}

template <class T, std::enable_if_t<std::is_same<T, double>::value ||
                                        std::is_same<T, int64_t>::value ||
                                        std::is_same<T, int32_t>::value,
                                    int> = 0>
inline void expand(T *out, const T *in, const int64_t *s, const int64_t *shape,
                   int rank, double scale) {
  using Acc = exact_gemm_acc<T>;
  binary<T>(out, in, s, in, s, shape, rank,
            [scale](T x, T) { return T(Acc(scale) * Acc(x)); });
}

// --- GEMMs on bf16/f16 (CpuTarget lists them as computing in the reduced
// type): f32 accumulation, the result rounded once, as ATen's CPU GEMMs on
// these types. A oneDNN matmul primitive (AVX512-BF16 instructions where the
// CPU has them) per shape, made on first use; where oneDNN has none for the
// type on this CPU, the operands are widened to f32 around sgemm.

inline dnnl_data_type_t dnnlType(const bf16 *) { return dnnl_bf16; }
inline dnnl_data_type_t dnnlType(const f16 *) { return dnnl_f16; }

struct ReducedGemm {
  int64_t key[10];
  dnnl_primitive_t matmul = nullptr; // null: oneDNN has none (widen instead)
  dnnl_memory_desc_t a, b, c;
  ~ReducedGemm() {
    if (matmul)
      dnnl_primitive_destroy(matmul);
  }
};

// The plan of C[batch] = alpha * op(A[b]) @ op(B[b]) + beta * C[b] (a batch
// of 1 broadcasts that operand), made once per shape and kept for the
// model's lifetime.
template <class T>
inline const ReducedGemm *reducedGemm(bool transA, bool transB, int64_t batchA,
                                      int64_t batchB, int64_t M, int64_t N,
                                      int64_t K, float alpha, float beta) {
  static std::mutex mu;
  static std::vector<std::unique_ptr<ReducedGemm>> plans;
  int32_t ab, bb;
  std::memcpy(&ab, &alpha, 4);
  std::memcpy(&bb, &beta, 4);
  const int64_t key[10] = {transA, transB, batchA, batchB, M, N, K, ab, bb, 0};
  std::lock_guard<std::mutex> lock(mu);
  for (auto &p : plans)
    if (std::memcmp(p->key, key, sizeof(key)) == 0)
      return p.get();
  auto plan = std::make_unique<ReducedGemm>();
  std::memcpy(plan->key, key, sizeof(key));
  const dnnl_data_type_t type = dnnlType(static_cast<const T *>(nullptr));
  const int64_t batch = std::max(batchA, batchB);
  dnnl_dims_t ad = {batchA, M, K}, bd = {batchB, K, N}, cd = {batch, M, N};
  dnnl_dims_t as = {M * K, transA ? 1 : K, transA ? M : 1};
  dnnl_dims_t bs = {K * N, transB ? 1 : N, transB ? K : 1};
  dnnl_dims_t cs = {M * N, N, 1};
  dnnl_matmul_desc_t md;
  dnnl_primitive_attr_t attr = nullptr;
  dnnl_post_ops_t ops = nullptr;
  dnnl_primitive_desc_t pd = nullptr;
  bool ok =
      dnnlEngine() &&
      dnnl_memory_desc_init_by_strides(&plan->a, 3, ad, type, as) == 0 &&
      dnnl_memory_desc_init_by_strides(&plan->b, 3, bd, type, bs) == 0 &&
      dnnl_memory_desc_init_by_strides(&plan->c, 3, cd, type, cs) == 0 &&
      dnnl_matmul_desc_init(&md, &plan->a, &plan->b, nullptr, &plan->c) == 0 &&
      dnnl_primitive_attr_create(&attr) == 0 &&
      (alpha == 1.f ||
       dnnl_primitive_attr_set_output_scales(attr, 1, 0, &alpha) == 0) &&
      (beta == 0.f || (dnnl_post_ops_create(&ops) == 0 &&
                       dnnl_post_ops_append_sum(ops, beta) == 0 &&
                       dnnl_primitive_attr_set_post_ops(attr, ops) == 0)) &&
      dnnl_primitive_desc_create(&pd, &md, attr, dnnlEngine(), nullptr) == 0 &&
      dnnl_primitive_create(&plan->matmul, pd) == 0;
  if (!ok && plan->matmul) {
    dnnl_primitive_destroy(plan->matmul);
    plan->matmul = nullptr;
  }
  if (pd)
    dnnl_primitive_desc_destroy(pd);
  if (ops)
    dnnl_post_ops_destroy(ops);
  if (attr)
    dnnl_primitive_attr_destroy(attr);
  plans.push_back(std::move(plan));
  return plans.back().get();
}

// The same through f32: the operands widened, sgemm per batch entry, the
// result rounded back.
template <class T>
inline int widenedGemm(bool transA, bool transB, int64_t batch, int64_t M,
                       int64_t N, int64_t K, float alpha, const T *A,
                       int64_t sa, const T *B, int64_t sb, float beta, T *C) {
  std::vector<float> a(M * K), b(K * N), c(M * N);
  int rc = 0;
  for (int64_t e = 0; e < batch && rc == 0; ++e) {
    const T *pa = A + e * sa, *pb = B + e * sb;
    T *pc = C + e * M * N;
    for (int64_t i = 0; i < M * K; ++i)
      a[i] = float(pa[i]);
    for (int64_t i = 0; i < K * N; ++i)
      b[i] = float(pb[i]);
    for (int64_t i = 0; beta != 0.f && i < M * N; ++i)
      c[i] = float(pc[i]);
    rc = gemm(transA, transB, M, N, K, alpha, a.data(), b.data(), beta,
              c.data());
    for (int64_t i = 0; i < M * N; ++i)
      pc[i] = T(c[i]);
  }
  return rc;
}

template <class T>
inline int reducedBatchedGemm(bool transA, bool transB, int64_t batch,
                              int64_t M, int64_t N, int64_t K, float alpha,
                              const T *A, int64_t sa, const T *B, int64_t sb,
                              float beta, T *C) {
  if (M == 0 || N == 0 || batch == 0)
    return 0;
  if (K == 0) { // an empty sum (oneDNN refuses it)
    for (int64_t i = 0; i < batch * M * N; ++i)
      C[i] = beta == 0 ? T(0.f) : T(beta * float(C[i]));
    return 0;
  }
  const ReducedGemm *plan =
      reducedGemm<T>(transA, transB, sa == 0 && batch > 1 ? 1 : batch,
                     sb == 0 && batch > 1 ? 1 : batch, M, N, K, alpha, beta);
  if (!plan->matmul)
    return widenedGemm(transA, transB, batch, M, N, K, alpha, A, sa, B, sb,
                       beta, C);
  bool ok =
      dnnlRun(plan->matmul, {{DNNL_ARG_SRC, &plan->a, const_cast<T *>(A)},
                             {DNNL_ARG_WEIGHTS, &plan->b, const_cast<T *>(B)},
                             {DNNL_ARG_DST, &plan->c, C}});
  return ok ? 0 : 199;
}

inline int gemm(bool transA, bool transB, int64_t M, int64_t N, int64_t K,
                float alpha, const bf16 *A, const bf16 *B, float beta,
                bf16 *C) {
  return reducedBatchedGemm(transA, transB, 1, M, N, K, alpha, A, 0, B, 0, beta,
                            C);
}
inline int gemm(bool transA, bool transB, int64_t M, int64_t N, int64_t K,
                float alpha, const f16 *A, const f16 *B, float beta, f16 *C) {
  return reducedBatchedGemm(transA, transB, 1, M, N, K, alpha, A, 0, B, 0, beta,
                            C);
}
inline int bmm(int64_t batch, int64_t M, int64_t N, int64_t K, const bf16 *A,
               int64_t sa, const bf16 *B, int64_t sb, bf16 *C) {
  return reducedBatchedGemm(false, false, batch, M, N, K, 1.f, A, sa, B, sb,
                            0.f, C);
}
inline int bmm(int64_t batch, int64_t M, int64_t N, int64_t K, const f16 *A,
               int64_t sa, const f16 *B, int64_t sb, f16 *C) {
  return reducedBatchedGemm(false, false, batch, M, N, K, 1.f, A, sa, B, sb,
                            0.f, C);
}

// out[idx] = in[idx . s] * scale on bf16/f16 (a GEMM's bias, broadcast).
template <class T>
inline std::enable_if_t<std::is_same_v<T, bf16> || std::is_same_v<T, f16>>
expand(T *out, const T *in, const int64_t *s, const int64_t *shape, int rank,
       float scale) {
  binary<float>(out, in, s, in, s, shape, rank,
                [scale](float x, float) { return T(x * scale); });
}

// nll_loss_forward: input [N, C] (or [C] with a 0-d target), target [N];
// reduction 0 none ([N] out), 1 mean, 2 sum. total_weight is the sum of the
// weights of the targets not ignored. Returns 2 for a target out of range.
template <class T>
inline int nll_loss(T *out, T *totalWeight, const T *in, const int64_t *target,
                    const T *weight, int64_t N, int64_t C, int reduction,
                    int64_t ignoreIndex) {
  double sum = 0, wsum = 0;
  for (int64_t i = 0; i < N; ++i) {
    int64_t t = target[i];
    if (t == ignoreIndex) {
      if (reduction == 0)
        out[i] = T(0);
      continue;
    }
    if (t < 0 || t >= C)
      return 2;
    double w = weight ? double(weight[t]) : 1.0;
    double v = -w * double(in[i * C + t]);
    if (reduction == 0)
      out[i] = T(v);
    sum += v;
    wsum += w;
  }
  if (reduction == 1)
    out[0] = T(sum / wsum); // 0/0 is nan, as in ATen
  else if (reduction == 2)
    out[0] = T(sum);
  if (totalWeight)
    totalWeight[0] = T(wsum);
  return 0;
}

// mse_loss of two same-shape tensors: reduction 0 none (n values), 1 mean,
// 2 sum; accumulated in double.
template <class T>
inline void mse_loss(T *out, const T *a, const T *b, int64_t n, int reduction) {
  if (reduction == 0) {
    for (int64_t i = 0; i < n; ++i)
      out[i] = (a[i] - b[i]) * (a[i] - b[i]);
    return;
  }
  double sum = 0;
  for (int64_t i = 0; i < n; ++i)
    sum += double(a[i] - b[i]) * double(a[i] - b[i]);
  out[0] = T(reduction == 1 ? sum / double(n) : sum);
}

// Random numbers: a counter-based generator (SplitMix64 of a per-call seed and
// the element index), so a parallel fill gives the same numbers as a serial
// one. Each call of a model draws a new seed from one process-wide counter
// (seeded from DYNOC_SEED, default 0): calls differ, runs of a process repeat.
// The stream is not torch's: a graph with random ops matches eager in
// distribution, not element by element.
inline uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}
inline uint64_t next_seed() {
  static std::atomic<uint64_t> counter{[] {
    const char *s = std::getenv("DYNOC_SEED");
    return s ? std::strtoull(s, nullptr, 10) : 0ull;
  }()};
  return splitmix64(counter.fetch_add(1) * 0x632BE59BD9B4E019ull + 1);
}
// A uniform double in [0, 1) from the 53 high bits.
inline double uniform01(uint64_t seed, int64_t i) {
  return double(splitmix64(seed ^ splitmix64(uint64_t(i))) >> 11) *
         (1.0 / 9007199254740992.0);
}
// kind: 0 uniform [a, b); 1 normal (mean a, std b); 2 bernoulli (p = a);
// 3 bernoulli with a per-element probability `p`.
template <class T>
inline void random_fill(T *out, int64_t n, int kind, double a, double b,
                        const T *p) {
  uint64_t seed = next_seed();
#pragma omp parallel for if (n > kParallelGrain)
  for (int64_t i = 0; i < n; ++i) {
    double u = uniform01(seed, i);
    double v;
    if (kind == 0) {
      v = a + (b - a) * u;
    } else if (kind == 1) { // Box-Muller on a second draw
      double u2 = uniform01(seed ^ 0xD1B54A32D192ED03ull, i);
      v = a + b * std::sqrt(-2.0 * std::log1p(-u)) *
                  std::cos(6.283185307179586 * u2);
    } else {
      v = u < (kind == 2 ? a : double(p[i])) ? 1.0 : 0.0;
    }
    out[i] = T(v);
  }
}

// cumsum along one dim of an [outer, n, inner] view, accumulated in the
// output's type (ATen promotes integer inputs to int64).
template <class TO, class TI>
inline void cumsum(TO *out, const TI *in, int64_t outer, int64_t n,
                   int64_t inner) {
#pragma omp parallel for if (outer * n * inner > kParallelGrain)
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t k = 0; k < inner; ++k) {
      TO acc = TO(0);
      for (int64_t i = 0; i < n; ++i) {
        acc += TO(in[(o * n + i) * inner + k]);
        out[(o * n + i) * inner + k] = acc;
      }
    }
}

// constant_pad_nd: out has `rank` dims `os`, in `is`; before[d] elements of
// `value` come before input dim d (negative: cropped). A row of the last dim
// at a time: `value`s, a run of the input row, `value`s.
template <class T>
inline void constant_pad(T *out, const T *in, const int64_t *os,
                         const int64_t *is, const int64_t *before, int rank,
                         T value) {
  int64_t n = 1;
  for (int d = 0; d < rank; ++d)
    n *= os[d];
  if (rank == 0 || n == 0) {
    if (n)
      out[0] = in[0];
    return;
  }
  int64_t inStrides[8];
  for (int d = rank - 1, stride = 1; d >= 0; --d) {
    inStrides[d] = stride;
    stride *= is[d];
  }
  // Output columns [lo, hi) of a row read input columns [lo - b, hi - b).
  const int64_t inner = os[rank - 1], rows = n / inner, b = before[rank - 1];
  const int64_t lo = std::clamp<int64_t>(b, 0, inner),
                hi = std::clamp<int64_t>(b + is[rank - 1], lo, inner);
#pragma omp parallel for if (n > kParallelGrain)
  for (int64_t r = 0; r < rows; ++r) {
    int64_t rest = r, src = 0;
    bool inside = true;
    for (int d = rank - 2; d >= 0; --d) {
      int64_t x = rest % os[d] - before[d];
      rest /= os[d];
      inside = inside && x >= 0 && x < is[d];
      src += x * inStrides[d];
    }
    T *dst = out + r * inner;
    if (!inside) {
      std::fill(dst, dst + inner, value);
      continue;
    }
    std::fill(dst, dst + lo, value);
    std::copy(in + src + lo - b, in + src + hi - b, dst + lo);
    std::fill(dst + hi, dst + inner, value);
  }
}

inline float sigmoidf(float x) { return 1.f / (1.f + std::exp(-x)); }

// One LSTM layer, one direction, as mkldnn_rnn_layer computes it: input
// [T, B, I] (or [B, T, I] with batchFirst), w_ih [4H, I], w_hh [4H, H], biases
// [4H] (may be null), h0/c0 [B, H]. Gates in PyTorch's order i, f, g, o.
// Writes y [T, B, H] (or [B, T, H]), hT and cT [B, H]. `scratch` holds
// T*B*4H + B*4H floats.
inline int lstm_layer(float *y, float *hT, float *cT, const float *x,
                      const float *wih, const float *whh, const float *bih,
                      const float *bhh, const float *h0, const float *c0,
                      int64_t T, int64_t B, int64_t I, int64_t H, bool reverse,
                      bool batchFirst, float *scratch) {
  const int64_t G = 4 * H;
  float *xg = scratch, *hg = scratch + T * B * G;
  // Input projections of every step in one GEMM: rows are (t, b) or (b, t).
  if (int rc = gemm(false, true, T * B, G, I, 1.f, x, wih, 0.f, xg))
    return rc;
  std::memcpy(hT, h0, size_t(B * H) * sizeof(float));
  std::memcpy(cT, c0, size_t(B * H) * sizeof(float));
  for (int64_t s = 0; s < T; ++s) {
    int64_t t = reverse ? T - 1 - s : s;
    if (int rc = gemm(false, true, B, G, H, 1.f, hT, whh, 0.f, hg))
      return rc;
    for (int64_t b = 0; b < B; ++b) {
      int64_t row = batchFirst ? b * T + t : t * B + b;
      const float *xr = xg + row * G;
      float *gr = hg + b * G;
      for (int64_t j = 0; j < G; ++j)
        gr[j] += xr[j] + (bih ? bih[j] : 0.f) + (bhh ? bhh[j] : 0.f);
      for (int64_t j = 0; j < H; ++j) {
        float ig = sigmoidf(gr[j]), fg = sigmoidf(gr[H + j]),
              gg = std::tanh(gr[2 * H + j]), og = sigmoidf(gr[3 * H + j]);
        float c = fg * cT[b * H + j] + ig * gg;
        cT[b * H + j] = c;
        float h = og * std::tanh(c);
        hT[b * H + j] = h;
        y[row * H + j] = h;
      }
    }
  }
  return 0;
}

// Transposed 2-D convolution, NCHW: input [N, C, H, W], weight [C, K/groups,
// R, S] (ConvTranspose2d's layout), output [N, K, OH, OW] with
// OH = (H - 1) * sh - 2 * ph + dh * (R - 1) + oph + 1. A scatter of every
// input pixel through the kernel, per image and group in parallel.
inline void conv_transpose2d(float *out, const float *in, const float *w,
                             const float *bias, int64_t N, int64_t C, int64_t H,
                             int64_t W, int64_t K, int64_t R, int64_t S,
                             int64_t OH, int64_t OW, int64_t sh, int64_t sw,
                             int64_t ph, int64_t pw, int64_t dh, int64_t dw,
                             int64_t groups) {
  const int64_t Cg = C / groups, Kg = K / groups;
#pragma omp parallel for collapse(2)
  for (int64_t n = 0; n < N; ++n)
    for (int64_t k = 0; k < K; ++k) {
      float *o = out + (n * K + k) * OH * OW;
      float b0 = bias ? bias[k] : 0.f;
      for (int64_t i = 0; i < OH * OW; ++i)
        o[i] = b0;
      int64_t g = k / Kg, kk = k % Kg;
      for (int64_t c = g * Cg; c < (g + 1) * Cg; ++c) {
        const float *xi = in + (n * C + c) * H * W;
        const float *wk = w + (c * Kg + kk) * R * S;
        for (int64_t y = 0; y < H; ++y)
          for (int64_t r = 0; r < R; ++r) {
            int64_t oy = y * sh - ph + r * dh;
            if (oy < 0 || oy >= OH)
              continue;
            for (int64_t x = 0; x < W; ++x) {
              float v = xi[y * W + x];
              for (int64_t s = 0; s < S; ++s) {
                int64_t ox = x * sw - pw + s * dw;
                if (ox >= 0 && ox < OW)
                  o[oy * OW + ox] += v * wk[r * S + s];
              }
            }
          }
      }
    }
}

// The weight gradient of a 2-D convolution (NCHW): per image n and group g,
// dw[g] += dy[n, g] (K/groups x P) @ im2col(x[n], g)^T (P x C/groups*R*S),
// P = OH * OW; `col` is scratch of C/groups * R * S * P floats.
inline int conv2d_backward_weight(float *dw, const float *dy, const float *x,
                                  int64_t N, int64_t C, int64_t H, int64_t W,
                                  int64_t K, int64_t R, int64_t S, int64_t OH,
                                  int64_t OW, int64_t sh, int64_t sw,
                                  int64_t ph, int64_t pw, int64_t dh,
                                  int64_t dw_, int64_t groups, float *col) {
  const int64_t Cg = C / groups, Kg = K / groups, CRS = Cg * R * S, P = OH * OW;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t g = 0; g < groups; ++g) {
      im2col(x, C, H, W, Cg, R, S, OH, OW, sh, sw, ph, pw, dh, dw_, n, 1, g,
             col);
      if (int rc = gemm(false, true, Kg, CRS, P, 1.f, dy + (n * K + g * Kg) * P,
                        col, n == 0 ? 0.f : 1.f, dw + g * Kg * CRS))
        return rc;
    }
  return 0;
}

// The input gradient of a 2-D convolution (NCHW): per image n and group g,
// the columns W[g]^T (C/groups*R*S x K/groups) @ dy[n, g] (K/groups x P),
// added back into the input positions they were read from (col2im), P = OH *
// OW; `col` is scratch of C/groups * R * S * P floats.
inline int conv2d_backward_input(float *dx, const float *dy, const float *w,
                                 int64_t N, int64_t C, int64_t H, int64_t W,
                                 int64_t K, int64_t R, int64_t S, int64_t OH,
                                 int64_t OW, int64_t sh, int64_t sw, int64_t ph,
                                 int64_t pw, int64_t dh, int64_t dw,
                                 int64_t groups, float *col) {
  const int64_t Cg = C / groups, Kg = K / groups, CRS = Cg * R * S, P = OH * OW;
  std::memset(dx, 0, size_t(N * C * H * W) * sizeof(float));
  for (int64_t n = 0; n < N; ++n)
    for (int64_t g = 0; g < groups; ++g) {
      if (int rc = gemm(true, false, CRS, P, Kg, 1.f, w + g * Kg * CRS,
                        dy + (n * K + g * Kg) * P, 0.f, col))
        return rc;
        // Each channel's rows are its own: channels in parallel.
#pragma omp parallel for if (CRS * P > kParallelGrain)
      for (int64_t c = 0; c < Cg; ++c) {
        float *img = dx + (n * C + g * Cg + c) * H * W;
        for (int64_t r = 0; r < R; ++r)
          for (int64_t s = 0; s < S; ++s) {
            const float *src = col + ((c * R + r) * S + s) * P;
            for (int64_t oh = 0; oh < OH; ++oh) {
              int64_t ih = oh * sh - ph + r * dh;
              if (ih < 0 || ih >= H)
                continue;
              float *row = img + ih * W;
              for (int64_t ow = 0; ow < OW; ++ow) {
                int64_t iw = ow * sw - pw + s * dw;
                if (iw >= 0 && iw < W)
                  row[iw] += src[oh * OW + ow];
              }
            }
          }
      }
    }
  return 0;
}

// The bias gradient of a convolution: db[k] = sum of dy[n, k, :] over n,
// accumulated in double.
inline void conv_backward_bias(float *db, const float *dy, int64_t N, int64_t K,
                               int64_t P) {
#pragma omp parallel for if (N * K * P > kParallelGrain)
  for (int64_t k = 0; k < K; ++k) {
    double acc = 0;
    for (int64_t n = 0; n < N; ++n) {
      const float *row = dy + (n * K + k) * P;
      for (int64_t p = 0; p < P; ++p)
        acc += row[p];
    }
    db[k] = float(acc);
  }
}

// 2-D average pooling, NCHW (planes = N * C), as ATen's CPU kernel: each
// window sums in row-major order and divides by `divisor` when it is > 0,
// else by its size with the padding it covers (countPad) or without. With
// ceil_mode a last window may start in the padding: it is 0.
inline void avg_pool2d(float *out, const float *in, int64_t planes, int64_t H,
                       int64_t W, int64_t OH, int64_t OW, int64_t kh,
                       int64_t kw, int64_t sh, int64_t sw, int64_t ph,
                       int64_t pw, bool countPad, int64_t divisor) {
#pragma omp parallel for if (planes * OH * OW * kh * kw > kParallelGrain)
  for (int64_t p = 0; p < planes; ++p) {
    const float *plane = in + p * H * W;
    float *dst = out + p * OH * OW;
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow) {
        int64_t h0 = oh * sh - ph, w0 = ow * sw - pw;
        int64_t h1 = std::min(h0 + kh, H + ph), w1 = std::min(w0 + kw, W + pw);
        int64_t padded = (h1 - h0) * (w1 - w0);
        h0 = std::max<int64_t>(h0, 0), w0 = std::max<int64_t>(w0, 0);
        h1 = std::min(h1, H), w1 = std::min(w1, W);
        if (h0 >= h1 || w0 >= w1) {
          dst[oh * OW + ow] = 0.f;
          continue;
        }
        float sum = 0.f;
        for (int64_t ih = h0; ih < h1; ++ih)
          for (int64_t iw = w0; iw < w1; ++iw)
            sum += plane[ih * W + iw];
        int64_t div = divisor > 0 ? divisor
                      : countPad  ? padded
                                  : (h1 - h0) * (w1 - w0);
        dst[oh * OW + ow] = sum / float(div);
      }
  }
}

// One plane's max pooling, window by window with bounds: the first largest
// element, or the last NaN (ATen's rule), and where it is (`idx` may be null).
template <class T>
inline void max_pool_plane(T *out, int64_t *idx, const T *plane, int64_t H,
                           int64_t W, int64_t OH, int64_t OW, int64_t kh,
                           int64_t kw, int64_t sh, int64_t sw, int64_t ph,
                           int64_t pw, int64_t dh, int64_t dw) {
  const T lowest = std::numeric_limits<T>::has_infinity
                       ? -std::numeric_limits<T>::infinity()
                       : std::numeric_limits<T>::lowest();
  for (int64_t oh = 0; oh < OH; ++oh)
    for (int64_t ow = 0; ow < OW; ++ow) {
      int64_t h0 = oh * sh - ph, w0 = ow * sw - pw;
      while (h0 < 0)
        h0 += dh;
      while (w0 < 0)
        w0 += dw;
      int64_t h1 = std::min(oh * sh - ph + (kh - 1) * dh + 1, H),
              w1 = std::min(ow * sw - pw + (kw - 1) * dw + 1, W);
      T best = lowest;
      int64_t at = h0 * W + w0;
      for (int64_t h = h0; h < h1; h += dh)
        for (int64_t w = w0; w < w1; w += dw) {
          T v = plane[h * W + w];
          if (v > best || v != v) {
            best = v;
            at = h * W + w;
          }
        }
      out[oh * OW + ow] = best;
      if (idx)
        idx[oh * OW + ow] = at;
    }
}

// 2-D max pooling with its indices, NCHW (planes = N * C), as ATen's CPU
// kernel picks them: the first largest element of each window in row-major
// order (a NaN wins, the last one), as an offset into its H x W plane.
// Padding counts as -inf.
inline void max_pool2d_indices(float *out, int64_t *idx, const float *in,
                               int64_t planes, int64_t H, int64_t W, int64_t OH,
                               int64_t OW, int64_t kh, int64_t kw, int64_t sh,
                               int64_t sw, int64_t ph, int64_t pw, int64_t dh,
                               int64_t dw) {
  // Without padding every window lies inside the input: no bounds checks.
  const bool inside = ph == 0 && pw == 0 && (OH - 1) * sh + (kh - 1) * dh < H &&
                      (OW - 1) * sw + (kw - 1) * dw < W;
#pragma omp parallel for if (planes * OH * OW * kh * kw > kParallelGrain)
  for (int64_t p = 0; p < planes; ++p) {
    const float *plane = in + p * H * W;
    if (inside) {
      // Selects, not branches: on real data which element wins is a coin
      // flip, and mispredicted branches cost more than the comparisons.
      for (int64_t oh = 0; oh < OH; ++oh) {
        float *o = out + (p * OH + oh) * OW;
        int64_t *ix = idx + (p * OH + oh) * OW;
#pragma omp simd
        for (int64_t ow = 0; ow < OW; ++ow) {
          int64_t at = oh * sh * W + ow * sw;
          float best = plane[at];
          for (int64_t r = 0; r < kh; ++r)
            for (int64_t s = 0; s < kw; ++s) {
              int64_t i = (oh * sh + r * dh) * W + ow * sw + s * dw;
              float v = plane[i];
              // bitwise: no short circuit, no branch
              int64_t m = -int64_t((v > best) | (v != v));
              uint32_t vb, bb;
              std::memcpy(&vb, &v, 4);
              std::memcpy(&bb, &best, 4);
              bb = (vb & uint32_t(m)) | (bb & ~uint32_t(m));
              std::memcpy(&best, &bb, 4);
              at = (i & m) | (at & ~m);
            }
          o[ow] = best;
          ix[ow] = at;
        }
      }
      continue;
    }
    max_pool_plane(out + p * OH * OW, idx + p * OH * OW, plane, H, W, OH, OW,
                   kh, kw, sh, sw, ph, pw, dh, dw);
  }
}

// Max pooling of f64 and integer planes (the f32 kernels are tuned, these
// plain): the first largest element of each window, or its last NaN, as
// ATen's; `idx` (may be null) gets where it is.
template <class T, std::enable_if_t<std::is_same<T, double>::value ||
                                        std::is_same<T, int64_t>::value ||
                                        std::is_same<T, int32_t>::value,
                                    int> = 0>
inline void max_pool2d_indices(T *out, int64_t *idx, const T *in,
                               int64_t planes, int64_t H, int64_t W, int64_t OH,
                               int64_t OW, int64_t kh, int64_t kw, int64_t sh,
                               int64_t sw, int64_t ph, int64_t pw, int64_t dh,
                               int64_t dw) {
#pragma omp parallel for if (planes * OH * OW * kh * kw > kParallelGrain)
  for (int64_t p = 0; p < planes; ++p)
    max_pool_plane(out + p * OH * OW, idx ? idx + p * OH * OW : nullptr,
                   in + p * H * W, H, W, OH, OW, kh, kw, sh, sw, ph, pw, dh,
                   dw);
}

template <class T, std::enable_if_t<std::is_same<T, double>::value ||
                                        std::is_same<T, int64_t>::value ||
                                        std::is_same<T, int32_t>::value,
                                    int> = 0>
inline void max_pool2d(T *out, const T *in, int64_t planes, int64_t H,
                       int64_t W, int64_t OH, int64_t OW, int64_t kh,
                       int64_t kw, int64_t sh, int64_t sw, int64_t ph,
                       int64_t pw, int64_t dh, int64_t dw) {
  max_pool2d_indices(out, static_cast<int64_t *>(nullptr), in, planes, H, W,
                     OH, OW, kh, kw, sh, sw, ph, pw, dh, dw);
}

// max_pool2d_with_indices_backward: dx is zero but for each window's chosen
// element, which gets the sum of the gradients of the outputs that chose it.
inline void max_pool2d_backward(float *dx, const float *dy, const int64_t *idx,
                                int64_t planes, int64_t H, int64_t W,
                                int64_t OH, int64_t OW) {
#pragma omp parallel for if (planes * H * W > kParallelGrain)
  for (int64_t p = 0; p < planes; ++p) {
    float *plane = dx + p * H * W;
    std::memset(plane, 0, size_t(H * W) * sizeof(float));
    for (int64_t o = 0; o < OH * OW; ++o) {
      int64_t at = idx[p * OH * OW + o];
      if (at >= 0 && at < H * W)
        plane[at] += dy[p * OH * OW + o];
    }
  }
}

// embedding_dense_backward: out[rows, D] zero but for the rows `indices`
// name, each the sum of the rows of g ([n, D]) with its index (padding's
// left zero). Each thread owns a slice of the D columns and adds the n rows
// in order, so the sums are the same whatever the thread count. An index
// out of range fails the call (code 3), as the forward's.
template <class T>
inline int embedding_backward(T *out, const T *g, const int64_t *indices,
                              int64_t n, int64_t rows, int64_t D,
                              int64_t padding) {
  for (int64_t i = 0; i < n; ++i)
    if (indices[i] < 0 || indices[i] >= rows)
      return 3;
#pragma omp parallel for if (rows * D > kParallelGrain)
  for (int64_t r = 0; r < rows; ++r)
    std::memset(out + r * D, 0, size_t(D) * sizeof(T));
  constexpr int64_t kColumns = 64;
#pragma omp parallel for if (n * D > kParallelGrain)
  for (int64_t c0 = 0; c0 < D; c0 += kColumns) {
    const int64_t c1 = std::min(D, c0 + kColumns);
    for (int64_t i = 0; i < n; ++i) {
      if (indices[i] == padding)
        continue;
      T *o = out + indices[i] * D;
      const T *src = g + i * D;
#pragma omp simd
      for (int64_t c = c0; c < c1; ++c)
        o[c] += src[c];
    }
  }
  return 0;
}

// Row-major C[M, N] = alpha * A @ op(B) + bias[N] (a linear layer): the
// bias broadcast into C, then a GEMM accumulating onto it.
template <class T>
inline int gemm_bias(bool transB, int64_t M, int64_t N, int64_t K, double alpha,
                     const T *A, const T *B, const T *bias, T *C) {
  const int64_t s[] = {0, 1}, shape[] = {M, N};
  expand(C, bias, s, shape, 2, T(1));
  return gemm(false, transB, M, N, K, T(alpha), A, B, T(1), C);
}

// The gradients of attention (dynoc_kernels.h, operands as there) given dO
// (batchHeads x L x Ev) and its output O: per batch-head, the probabilities
// P are computed again into scratch, then dV += P^T dO, dP = dO V^T,
// dS = P * (dP - rowsum(dO * O)), dQ = scale * dS K, dK += scale * dS^T Q.
// A key/value head's gradients sum over the query heads of its group, which
// one thread handles in turn. `scores`: scratch of 2 * batchHeads * L * S
// floats. No dropout.
inline int attention_backward(float *dq, float *dk, float *dv,
                              const float *dout, const float *q,
                              const float *k, const float *v, const float *out,
                              int64_t batchHeads, int64_t L, int64_t S,
                              int64_t E, int64_t Ev, double scale, bool causal,
                              float *scores, const float *mask,
                              const int64_t *ms, int64_t heads, int64_t group) {
  int rc = 0;
  const int64_t kvHeads = batchHeads / group;
#pragma omp parallel for if (kvHeads > 1) reduction(max : rc)
  for (int64_t g = 0; g < kvHeads; ++g) {
    float *P = scores + 2 * g * L * S, *dS = P + L * S;
    float *dkg = dk + g * S * E, *dvg = dv + g * S * Ev;
    const float *kg = k + g * S * E, *vg = v + g * S * Ev;
    for (int64_t r = 0; r < group; ++r) {
      const int64_t b = g * group + r;
      const float *dob = dout + b * L * Ev, *ob = out + b * L * Ev,
                  *qb = q + b * L * E;
      const float beta = r == 0 ? 0.f : 1.f; // the group's first head sets
      rc = std::max(rc, attention_probabilities(P, q, k, b, L, S, E, scale,
                                                causal, mask, ms, heads,
                                                group));
      rc = std::max(rc, gemm(true, false, S, Ev, L, 1.f, P, dob, beta, dvg));
      rc = std::max(rc, gemm(false, true, L, S, Ev, 1.f, dob, vg, 0.f, dS));
      for (int64_t i = 0; i < L; ++i) {
        double rowDot = 0;
        for (int64_t j = 0; j < Ev; ++j)
          rowDot += double(dob[i * Ev + j]) * ob[i * Ev + j];
        const float d = float(rowDot);
        float *ds = dS + i * S;
        const float *p = P + i * S;
        for (int64_t j = 0; j < S; ++j)
          ds[j] = p[j] * (ds[j] - d);
      }
      rc = std::max(rc, gemm(false, false, L, E, S, float(scale), dS, kg, 0.f,
                             dq + b * L * E));
      rc = std::max(rc, gemm(true, false, S, E, L, float(scale), dS, qb, beta,
                             dkg));
    }
  }
  return rc;
}

} // namespace dynoc_k
