// Which cuBLASLt algorithms the heuristic offers for one bf16 GEMM, and how
// fast each runs, against cublasGemmEx (what torch's mm calls) on the same
// operands (issue 51: GPT-2's vocabulary projection, whose 50257 output
// columns make every row of the output start unaligned).
//
//   nvcc -O2 -std=c++17 -arch=sm_90 bench/cuda/gemm_algorithms.cu \
//        -I$NV/cu13/include -L$NV/cu13/lib -lcublasLt -lcublas -o /tmp/ga
//   /tmp/ga M N K        (row-major D[M,N] = A[M,K] @ B[N,K]^T, as F.linear)
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(x)                                                               \
  do {                                                                         \
    auto s_ = (x);                                                             \
    if (int(s_) != 0) {                                                        \
      std::printf("%s failed: %d (line %d)\n", #x, int(s_), __LINE__);         \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)

template <class F> float timeIt(F f) {
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  for (int i = 0; i < 3; ++i)
    f();
  std::vector<float> ms;
  for (int i = 0; i < 15; ++i) {
    cudaEventRecord(a);
    f();
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    float t;
    cudaEventElapsedTime(&t, a, b);
    ms.push_back(t);
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

int main(int argc, char **argv) {
  const int64_t M = argc > 1 ? atoll(argv[1]) : 4096;
  const int64_t N = argc > 2 ? atoll(argv[2]) : 50257;
  const int64_t K = argc > 3 ? atoll(argv[3]) : 768;
  __nv_bfloat16 *A, *B, *D;
  CHECK(cudaMalloc(&A, M * K * 2));
  CHECK(cudaMalloc(&B, N * K * 2));
  CHECK(cudaMalloc(&D, M * N * 2));
  cudaMemset(A, 0x3c, M * K * 2);
  cudaMemset(B, 0x3c, N * K * 2);
  void *ws;
  const size_t wsBytes = 8 << 20;
  CHECK(cudaMalloc(&ws, wsBytes));
  const double flops = 2.0 * M * N * K;
  // Column-major: D^T[N,M] = B[N,K] (stored K x N, transposed) @ A^T.
  cublasHandle_t blas;
  CHECK(cublasCreate(&blas));
  float one = 1.f, zero = 0.f;
  float tEx = timeIt([&] {
    cublasGemmEx(blas, CUBLAS_OP_T, CUBLAS_OP_N, int(N), int(M), int(K), &one,
                 B, CUDA_R_16BF, int(K), A, CUDA_R_16BF, int(K), &zero, D,
                 CUDA_R_16BF, int(N), CUBLAS_COMPUTE_32F,
                 CUBLAS_GEMM_DEFAULT);
  });
  std::printf("M=%ld N=%ld K=%ld  cublasGemmEx: %.3f ms (%.0f TFLOP/s)\n", M, N,
              K, tEx, flops / tEx / 1e9);
  cublasLtHandle_t lt;
  CHECK(cublasLtCreate(&lt));
  cublasLtMatmulDesc_t desc;
  CHECK(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  cublasOperation_t opT = CUBLAS_OP_T, opN = CUBLAS_OP_N;
  cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &opT,
                                 sizeof opT);
  cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &opN,
                                 sizeof opN);
  cublasLtMatrixLayout_t la, lb, ld;
  CHECK(cublasLtMatrixLayoutCreate(&la, CUDA_R_16BF, K, N, K));
  CHECK(cublasLtMatrixLayoutCreate(&lb, CUDA_R_16BF, K, M, K));
  CHECK(cublasLtMatrixLayoutCreate(&ld, CUDA_R_16BF, N, M, N));
  cublasLtMatmulPreference_t pref;
  CHECK(cublasLtMatmulPreferenceCreate(&pref));
  uint64_t w = wsBytes;
  cublasLtMatmulPreferenceSetAttribute(
      pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &w, sizeof w);
  cublasLtMatmulHeuristicResult_t results[16];
  int found = 0;
  CHECK(cublasLtMatmulAlgoGetHeuristic(lt, desc, la, lb, ld, ld, pref, 16,
                                       results, &found));
  std::printf("cuBLASLt heuristic: %d algorithms\n", found);
  for (int i = 0; i < found; ++i) {
    int id = 0, tile = 0, stages = 0;
    size_t got;
    cublasLtMatmulAlgoConfigGetAttribute(&results[i].algo,
                                         CUBLASLT_ALGO_CONFIG_ID, &id,
                                         sizeof id, &got);
    cublasLtMatmulAlgoConfigGetAttribute(&results[i].algo,
                                         CUBLASLT_ALGO_CONFIG_TILE_ID, &tile,
                                         sizeof tile, &got);
    cublasLtMatmulAlgoConfigGetAttribute(&results[i].algo,
                                         CUBLASLT_ALGO_CONFIG_STAGES_ID,
                                         &stages, sizeof stages, &got);
    float t = timeIt([&] {
      cublasLtMatmul(lt, desc, &one, B, la, A, lb, &zero, D, ld, D, ld,
                     &results[i].algo, ws, wsBytes, 0);
    });
    std::printf("  #%d algo %d tile %d stages %d workspace %zu: %.3f ms (%.0f "
                "TFLOP/s)\n",
                i, id, tile, stages, results[i].workspaceSize, t,
                flops / t / 1e9);
  }
  CHECK(cudaDeviceSynchronize());
  return 0;
}
