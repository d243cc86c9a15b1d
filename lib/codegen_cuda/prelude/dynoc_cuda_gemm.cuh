// dynoc_cuda_gemm.cuh - GEMMs and batched GEMMs through cuBLASLt. Row-major
// C = A @ B is computed as column-major C^T = B^T @ A^T. Each thread keeps
// its own cache of matmul descriptors and the heuristic's algorithm per
// problem, so a run takes no lock; a replayed CUDA graph skips all of it.
#pragma once

namespace dynoc_k {

inline cublasLtHandle_t &ltHandle() {
  static cublasLtHandle_t h = nullptr;
  return h;
}
// f32 GEMMs use TF32 tensor cores only when the build said --allow-tf32.
#ifndef DYNOC_ALLOW_TF32
#define DYNOC_ALLOW_TF32 0
#endif

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

// A plan for column-major D[m, n] = op(X)[m, k] @ op(Y)[k, n] (+ beta D),
// batched `batch` times at strides sx, sy, sd.
inline GemmPlan *gemmPlan(bool transX, bool transY, int64_t m, int64_t n,
                          int64_t k, int64_t batch, int64_t sx, int64_t sy,
                          int64_t sd, bool accumulate) {
  struct Key {
    int64_t v[10];
    bool operator==(const Key &o) const {
      return std::memcmp(v, o.v, sizeof v) == 0;
    }
  };
  struct KeyHash {
    size_t operator()(const Key &k) const {
      size_t h = 1469598103934665603ull;
      for (int64_t x : k.v)
        h = (h ^ size_t(x)) * 1099511628211ull;
      return h;
    }
  };
  static thread_local std::unordered_map<Key, GemmPlan, KeyHash> plans;
  Key key{{transX, transY, m, n, k, batch, sx, sy, sd, accumulate}};
  auto it = plans.find(key);
  if (it != plans.end())
    return it->second.ok ? &it->second : nullptr;
  GemmPlan &p = plans[key];
  cublasComputeType_t compute =
      DYNOC_ALLOW_TF32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  if (!ltCheck(cublasLtMatmulDescCreate(&p.desc, compute, CUDA_R_32F),
               "cublasLtMatmulDescCreate"))
    return nullptr;
  cublasOperation_t opX = transX ? CUBLAS_OP_T : CUBLAS_OP_N,
                    opY = transY ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_TRANSA, &opX,
                                 sizeof opX);
  cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_TRANSB, &opY,
                                 sizeof opY);
  // Stored (column-major) shapes: X is m x k (k x m transposed), Y k x n.
  uint64_t xr = transX ? k : m, xc = transX ? m : k;
  uint64_t yr = transY ? n : k, yc = transY ? k : n;
  if (!ltCheck(cublasLtMatrixLayoutCreate(&p.a, CUDA_R_32F, xr, xc, xr),
               "cublasLtMatrixLayoutCreate") ||
      !ltCheck(cublasLtMatrixLayoutCreate(&p.b, CUDA_R_32F, yr, yc, yr),
               "cublasLtMatrixLayoutCreate") ||
      !ltCheck(cublasLtMatrixLayoutCreate(&p.c, CUDA_R_32F, m, n, m),
               "cublasLtMatrixLayoutCreate"))
    return nullptr;
  if (batch > 1) {
    int32_t count = int32_t(batch);
    int64_t strides[3] = {sx, sy, sd};
    cublasLtMatrixLayout_t layouts[3] = {p.a, p.b, p.c};
    for (int i = 0; i < 3; ++i) {
      cublasLtMatrixLayoutSetAttribute(layouts[i],
                                       CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT,
                                       &count, sizeof count);
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

inline int runGemm(bool transX, bool transY, int64_t m, int64_t n, int64_t k,
                   int64_t batch, float alpha, const float *X, int64_t sx,
                   const float *Y, int64_t sy, float beta, float *D,
                   int64_t sd) {
  if (m == 0 || n == 0 || batch == 0)
    return 0;
  if (k == 0) { // an empty sum: D = beta * D
    const int64_t one = 1, total = m * n * batch;
    expand(D, D, &one, &total, 1, beta);
    return 0;
  }
  GemmPlan *p = gemmPlan(transX, transY, m, n, k, batch, sx, sy, sd,
                         beta != 0.f);
  if (!p)
    return state().error ? state().error : 300;
  RunState &s = state();
  ltCheck(cublasLtMatmul(ltHandle(), p->desc, &alpha, X, p->a, Y, p->b, &beta,
                         D, p->c, D, p->c, &p->algo, s.gemmWorkspace,
                         s.gemmWorkspaceBytes, s.stream),
          "cublasLtMatmul");
  return 0; // a failure is in the run state; the run returns it
}

// Row-major C[M, N] = alpha * op(A) @ op(B) + beta * C.
inline int gemm(bool transA, bool transB, int64_t M, int64_t N, int64_t K,
                float alpha, const float *A, const float *B, float beta,
                float *C) {
  return runGemm(transB, transA, N, M, K, 1, alpha, B, 0, A, 0, beta, C, 0);
}

// Batched row-major C[b] = A[b] @ B[b]; sa/sb element strides between batch
// entries (0 broadcasts one operand).
inline int bmm(int64_t batch, int64_t M, int64_t N, int64_t K, const float *A,
               int64_t sa, const float *B, int64_t sb, float *C) {
  return runGemm(false, false, N, M, K, batch, 1.f, B, sb, A, sa, 0.f, C,
                 M * N);
}

} // namespace dynoc_k
