// gemm.cu - GEMMs and batched GEMMs through cuBLASLt. Row-major
// C = A @ B is computed as column-major C^T = B^T @ A^T. Each thread keeps
// its own cache of matmul descriptors and the heuristic's algorithm per
// problem, so a run takes no lock; a replayed CUDA graph skips all of it.
// f32, bf16 and f16 operands; bf16/f16 accumulate in f32 (scale type f32).
// A linear's bias is cuBLASLt's bias epilogue, not a pass over the output.
// Part of the kernel library (dynoc_cuda_library.cuh).
#include "dynoc_cuda_core.cuh"

#include <cublasLt.h>

#include <mutex>
#include <unordered_map>

namespace dynoc_k {

// The process's cuBLASLt handle (core.cu).
cublasLtHandle_t &ltHandle();

// f32 GEMMs use TF32 tensor cores only when the build said --allow-tf32.
#ifndef DYNOC_ALLOW_TF32
#define DYNOC_ALLOW_TF32 0
#endif

template <class T> struct GemmType;
template <> struct GemmType<float> {
  static constexpr cudaDataType_t kData = CUDA_R_32F;
  static constexpr cublasComputeType_t kCompute =
      DYNOC_ALLOW_TF32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
};
template <> struct GemmType<bf16> {
  static constexpr cudaDataType_t kData = CUDA_R_16BF;
  static constexpr cublasComputeType_t kCompute = CUBLAS_COMPUTE_32F;
};
template <> struct GemmType<f16> {
  static constexpr cudaDataType_t kData = CUDA_R_16F;
  static constexpr cublasComputeType_t kCompute = CUBLAS_COMPUTE_32F;
};

struct GemmPlan {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  cublasLtMatmulAlgo_t algo;
  bool ok = false;
};

inline bool ltCheck(cublasStatus_t s, const char *what) {
  if (s == CUBLAS_STATUS_SUCCESS)
    return true;
  fail(300 + int(s), what, cublasLtGetStatusString(s));
  return false;
}

// A plan for column-major D[m, n] = op(X)[m, k] @ op(Y)[k, n] (+ beta D, or
// + bias[m] broadcast along n), batched `batch` times at strides sx, sy, sd,
// on `data` elements.
// The alignment of a pointer in bytes (a power of two), up to 256: what
// cuBLASLt's heuristic may assume of an operand.
inline uint32_t alignmentOf(const void *p) {
  uintptr_t a = reinterpret_cast<uintptr_t>(p);
  return a == 0 ? 256u : uint32_t(std::min<uintptr_t>(a & (~a + 1), 256));
}

inline GemmPlan *gemmPlan(cudaDataType_t data, cublasComputeType_t compute,
                          bool transX, bool transY, int64_t m, int64_t n,
                          int64_t k, int64_t batch, int64_t sx, int64_t sy,
                          int64_t sd, bool accumulate, const void *bias,
                          const void *X, const void *Y, const void *D,
                          int64_t ldd) {
  using Key = PlanKey<17>;
  static thread_local std::unordered_map<Key, GemmPlan, PlanKeyHash<17>> plans;
  // Operand alignments (not addresses) can change the algorithm: the
  // heuristic assumes 256-byte operands unless told otherwise.
  const uint32_t ax = alignmentOf(X), ay = alignmentOf(Y), ad = alignmentOf(D);
  Key key{{int64_t(data), int64_t(compute), transX, transY, m, n, k, batch, sx,
           sy, sd, accumulate, bias != nullptr, ax, ay, ad, ldd}};
  auto it = plans.find(key);
  if (it != plans.end()) {
    if (!it->second.ok)
      return nullptr;
    if (bias)
      cublasLtMatmulDescSetAttribute(it->second.desc,
                                     CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias,
                                     sizeof bias);
    return &it->second;
  }
  GemmPlan &p = plans[key];
  if (!ltCheck(cublasLtMatmulDescCreate(&p.desc, compute, CUDA_R_32F),
               "cublasLtMatmulDescCreate"))
    return nullptr;
  if (bias) {
    cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_BIAS;
    cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_EPILOGUE,
                                   &epilogue, sizeof epilogue);
    cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER,
                                   &bias, sizeof bias);
  }
  cublasOperation_t opX = transX ? CUBLAS_OP_T : CUBLAS_OP_N,
                    opY = transY ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_TRANSA, &opX,
                                 sizeof opX);
  cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_TRANSB, &opY,
                                 sizeof opY);
  // Stored (column-major) shapes: X is m x k (k x m transposed), Y k x n.
  uint64_t xr = transX ? k : m, xc = transX ? m : k;
  uint64_t yr = transY ? n : k, yc = transY ? k : n;
  if (!ltCheck(cublasLtMatrixLayoutCreate(&p.a, data, xr, xc, xr),
               "cublasLtMatrixLayoutCreate") ||
      !ltCheck(cublasLtMatrixLayoutCreate(&p.b, data, yr, yc, yr),
               "cublasLtMatrixLayoutCreate") ||
      !ltCheck(cublasLtMatrixLayoutCreate(&p.c, data, m, n, ldd),
               "cublasLtMatrixLayoutCreate"))
    return nullptr;
  if (batch > 1) {
    int32_t count = int32_t(batch);
    int64_t strides[3] = {sx, sy, sd};
    cublasLtMatrixLayout_t layouts[3] = {p.a, p.b, p.c};
    for (int i = 0; i < 3; ++i) {
      cublasLtMatrixLayoutSetAttribute(
          layouts[i], CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof count);
      cublasLtMatrixLayoutSetAttribute(
          layouts[i], CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &strides[i],
          sizeof strides[i]);
    }
  }
  cublasLtMatmulPreference_t pref;
  if (!ltCheck(cublasLtMatmulPreferenceCreate(&pref),
               "cublasLtMatmulPreferenceCreate"))
    return nullptr;
  uint64_t wsBytes = uint64_t(kGemmWorkspaceBytes);
  cublasLtMatmulPreferenceSetAttribute(
      pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &wsBytes, sizeof wsBytes);
  const std::pair<cublasLtMatmulPreferenceAttributes_t, uint32_t> aligns[] = {
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, ax},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, ay},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, ad},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, ad}};
  for (const auto &[attr, bytes] : aligns)
    cublasLtMatmulPreferenceSetAttribute(pref, attr, &bytes, sizeof bytes);
  cublasLtMatmulHeuristicResult_t result;
  int found = 0;
  cublasStatus_t s = cublasLtMatmulAlgoGetHeuristic(
      ltHandle(), p.desc, p.a, p.b, p.c, p.c, pref, 1, &result, &found);
  cublasLtMatmulPreferenceDestroy(pref);
  if (!ltCheck(s, "cublasLtMatmulAlgoGetHeuristic"))
    return nullptr;
  if (found == 0) {
    fail(300 + int(CUBLAS_STATUS_NOT_SUPPORTED), "cuBLASLt",
         "no algorithm for this GEMM");
    return nullptr;
  }
  p.algo = result.algo;
  p.ok = true;
  return &p;
}

// cuBLASLt's fast Hopper kernels need D's column count m (the row length
// of the row-major result) to be a multiple of 16 bytes; otherwise only
// kernels for 1-element alignment remain, 7.6x slower for GPT-2 small's
// vocabulary projection (m = 50257 words) at 8x512 tokens on an H200: 3.37
// ms, also through cublasGemmEx, against 0.44 ms with m = 50264
// (bench/cuda/gemm_algorithms.cu). Such a GEMM, when large, runs with m
// padded: X (a linear's weight, transposed: its rows are X's columns) is
// copied into scratch with room for the padding rows, whose values only
// reach D's padding, and a 2-D copy packs the result into D (Inductor pads
// the weight likewise). Only where nothing is accumulated and the scratch
// can be had; false where it did not run.
template <class T>
inline bool runPaddedGemm(bool transX, bool transY, int64_t m, int64_t n,
                          int64_t k, float alpha, const T *X, const T *Y,
                          T *D, const T *bias) {
  if (sizeof(T) != 2) // f32 GEMMs stay off the tensor cores anyway
    return false;
  constexpr int64_t kPerAligned = 16 / int64_t(sizeof(T));
  constexpr double kMinFlops = double(1 << 30);
  const int64_t yr = transY ? n : k;
  if (m % kPerAligned == 0 || !transX || k % kPerAligned ||
      yr % kPerAligned || bias ||
      2.0 * double(m) * double(n) * double(k) < kMinFlops)
    return false;
  cudaMemPool_t pool = scratchPool();
  if (!pool)
    return false;
  const int64_t mp = (m + kPerAligned - 1) / kPerAligned * kPerAligned;
  cudaStream_t s = stream();
  void *scratch = nullptr;
  if (cudaMallocFromPoolAsync(&scratch, size_t(mp * (n + k)) * sizeof(T), pool,
                              s) != cudaSuccess) {
    cudaGetLastError(); // out of memory: the unpadded GEMM runs
    return false;
  }
  T *P = static_cast<T *>(scratch), *Xp = P + mp * n;
  GemmPlan *p =
      gemmPlan(GemmType<T>::kData, GemmType<T>::kCompute, true, transY, mp, n,
               k, 1, 0, 0, 0, false, nullptr, Xp, Y, P, mp);
  if (p) {
    RunState &st = state();
    const float beta = 0.f;
    check(cudaMemcpyAsync(Xp, X, size_t(m * k) * sizeof(T),
                          cudaMemcpyDeviceToDevice, s),
          "GEMM operand padding");
    ltCheck(cublasLtMatmul(ltHandle(), p->desc, &alpha, Xp, p->a, Y, p->b,
                           &beta, P, p->c, P, p->c, &p->algo, st.gemmWorkspace,
                           st.gemmWorkspaceBytes, s),
            "cublasLtMatmul");
    check(cudaMemcpy2DAsync(D, size_t(m) * sizeof(T), P,
                            size_t(mp) * sizeof(T), size_t(m) * sizeof(T),
                            size_t(n), cudaMemcpyDeviceToDevice, s),
          "GEMM output packing");
  }
  check(cudaFreeAsync(scratch, s), "GEMM scratch");
  return true; // a failure is in the run state; the run returns it
}

template <class T>
inline int runGemm(bool transX, bool transY, int64_t m, int64_t n, int64_t k,
                   int64_t batch, float alpha, const T *X, int64_t sx,
                   const T *Y, int64_t sy, float beta, T *D, int64_t sd,
                   const T *bias = nullptr) {
  if (m == 0 || n == 0 || batch == 0)
    return 0;
  if (k == 0) { // an empty sum: D = beta * D (+ bias)
    const int64_t total = m * n * batch;
    if (bias) {
      const int64_t s[] = {0, 1}, shape[] = {total / m, m};
      expand(D, bias, s, shape, 2, 1.f);
    } else {
      const int64_t one = 1;
      expand(D, D, &one, &total, 1, beta);
    }
    return 0;
  }
  // cuBLASLt's bias epilogue reads the vector in 16-byte units: a bias
  // elsewhere is broadcast into D first.
  if (bias && alignmentOf(bias) < 16) {
    const int64_t s[] = {0, 1}, shape[] = {n * batch, m};
    expand(D, bias, s, shape, 2, 1.f);
    bias = nullptr;
    beta = 1.f;
  }
  if (batch == 1 && beta == 0.f &&
      runPaddedGemm(transX, transY, m, n, k, alpha, X, Y, D, bias))
    return state().error;
  GemmPlan *p =
      gemmPlan(GemmType<T>::kData, GemmType<T>::kCompute, transX, transY, m, n,
               k, batch, sx, sy, sd, beta != 0.f, bias, X, Y, D, m);
  if (!p)
    return state().error ? state().error : 300;
  RunState &s = state();
  ltCheck(cublasLtMatmul(ltHandle(), p->desc, &alpha, X, p->a, Y, p->b, &beta,
                         D, p->c, D, p->c, &p->algo, s.gemmWorkspace,
                         s.gemmWorkspaceBytes, s.stream),
          "cublasLtMatmul");
  return 0; // a failure is in the run state; the run returns it
}

template <class T>
int gemm(bool transA, bool transB, int64_t M, int64_t N, int64_t K, float alpha,
         const T *A, const T *B, float beta, T *C) {
  return runGemm(transB, transA, N, M, K, 1, alpha, B, 0, A, 0, beta, C, 0);
}

template <class T>
int gemm_bias(bool transB, int64_t M, int64_t N, int64_t K, float alpha,
              const T *A, const T *B, const T *bias, T *C) {
  return runGemm(transB, false, N, M, K, 1, alpha, B, 0, A, 0, 0.f, C, 0, bias);
}

template <class T>
int bmm(int64_t batch, int64_t M, int64_t N, int64_t K, const T *A, int64_t sa,
        const T *B, int64_t sb, T *C) {
  return runGemm(false, false, N, M, K, batch, 1.f, B, sb, A, sa, 0.f, C,
                 M * N);
}

#define DYNOC_GEMM(T)                                                          \
  template int gemm<T>(bool, bool, int64_t, int64_t, int64_t, float,           \
                       const T *, const T *, float, T *);                      \
  template int gemm_bias<T>(bool, int64_t, int64_t, int64_t, float, const T *, \
                            const T *, const T *, T *);                        \
  template int bmm<T>(int64_t, int64_t, int64_t, int64_t, const T *, int64_t,  \
                      const T *, int64_t, T *);
// Compiled once per element type (CudaBuild.cpp, kLibraryUnits): a model
// links only the objects of the types it uses.
DYNOC_GEMM(DYNOC_TYPE)

} // namespace dynoc_k
