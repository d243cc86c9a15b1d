// conv.cu - 2-D convolutions (NCHW) through cuDNN (f32 depthwise ones in a
// kernel of their own). Part of the kernel library (dynoc_cuda_library.cuh);
// a model .so links this object, and libcudnn, only where its graph has a
// convolution, so a transformer's .so does not need libcudnn at load. The
// library compiles it only where cuDNN's headers are installed
// (lib/codegen_cuda/CudaBuild.cpp).
#include "dynoc_cuda_core.cuh"

#include <cudnn.h>

#include <unordered_map>
#include <vector>

namespace dynoc_k {

// The clamp [lo, hi] a convolution's last pass applies to its output (a
// ReLU or hardtanh after it, lib/codegen: Target::convolutionClamp); -inf,
// inf for none. NaN stays NaN, as in ATen's clamp.
__device__ __forceinline__ float clampTo(float x, float lo, float hi) {
  return x < lo ? lo : x > hi ? hi : x;
}
inline bool clamps(float lo, float hi) {
  return lo != -INFINITY || hi != INFINITY;
}

// A grouped convolution with few input channels per group (cg; 1: a
// depthwise one), stride 1, dilation 1 and an R x S window known at compile
// time, f32 accumulation. Output channel k is in group k / kg and reads that
// group's cg input channels. A block computes planes (n, k), so the plane's
// index and weights are the same for all its threads; a thread computes a
// tile of kStencilRows x kStencilCols outputs of the plane: per input
// channel, it walks the input rows the tile reads once, top to bottom,
// loading each row's kStencilCols + S - 1 values once (neighbouring threads'
// tiles overlap by S - 1 columns: L1 hits) and adding them to every output
// of the tile whose window holds them. No shared memory, no barrier, and
// about (kStencilCols + S - 1) / kStencilCols loads per output and input row.
// On an H100 (docs/cuda.md): MobileNetV2's depthwise 3x3 and ResNeXt's
// 32-group 3x3 at batch 32.
constexpr int kStencilRows = 8, kStencilCols = 4;
// Blocks of kStencilThreads; a 3x3 window in at most 128 registers (two
// blocks per multiprocessor: the unrolled rows keep about 60 loads in
// flight; at 85, 64 bytes spilled). Larger windows take more.
constexpr int kStencilThreads = 256;
template <class T, int R, int S>
__global__ void __launch_bounds__(kStencilThreads, R == 3 ? 2 : 1)
    groupedStencilKernel(T *out, const T *in, const T *w, const T *bias,
                         unsigned planes, int C, int H, int W, int K, int OH,
                         int OW, int ph, int pw, int cg, int kg, int tiles,
                         int quads, float lo, float hi) {
  constexpr int V = kStencilCols + S - 1; // input values per row
  const unsigned perPlane = unsigned(tiles) * unsigned(quads);
  for (unsigned plane = blockIdx.x; plane < planes; plane += gridDim.x) {
    const int k = int(plane % unsigned(K));
    const unsigned n = plane / unsigned(K);
    const T *planeIn = in + (int64_t(n) * C + (k / kg) * cg) * int64_t(H) * W;
    const float b = bias ? float(bias[k]) : 0.f;
    for (unsigned t = threadIdx.x; t < perPlane; t += blockDim.x) {
      const int tile = int(t / unsigned(quads));
      const int ow0 = (int(t) - tile * quads) * kStencilCols;
      const int oh0 = tile * kStencilRows;
      float acc[kStencilRows][kStencilCols];
#pragma unroll
      for (int q = 0; q < kStencilRows; ++q)
#pragma unroll
        for (int x = 0; x < kStencilCols; ++x)
          acc[q][x] = b;
      // The columns this tile reads, clamped into the plane, and whether
      // each is inside it (padding reads as zero).
      int col[V];
      bool colIn[V];
#pragma unroll
      for (int j = 0; j < V; ++j) {
        const int x = ow0 - pw + j;
        colIn[j] = x >= 0 && x < W;
        col[j] = min(max(x, 0), W - 1);
      }
      for (int c = 0; c < cg; ++c) {
        const T *src = planeIn + int64_t(c) * H * W;
        const T *wc = w + (int64_t(k) * cg + c) * R * S;
        float wk[R][S];
#pragma unroll
        for (int i = 0; i < R; ++i)
#pragma unroll
          for (int j = 0; j < S; ++j)
            wk[i][j] = float(wc[i * S + j]);
#pragma unroll
        for (int r = 0; r < kStencilRows + R - 1; ++r) {
          // Every load is of an address inside the plane and the zero is a
          // select after it: a load under a condition compiles to a branch
          // around it, which kept the unrolled loop from issuing a thread's
          // loads together.
          const int ih = oh0 - ph + r;
          const bool rowIn = ih >= 0 && ih < H;
          const T *row = src + (rowIn ? ih : 0) * W;
          float v[V];
#pragma unroll
          for (int j = 0; j < V; ++j) {
            const float loaded = float(__ldg(row + col[j]));
            v[j] = rowIn && colIn[j] ? loaded : 0.f;
          }
          // Input row r is row i of the window of output row q = r - i.
#pragma unroll
          for (int i = 0; i < R; ++i) {
            const int q = r - i;
            if (q >= 0 && q < kStencilRows)
#pragma unroll
              for (int x = 0; x < kStencilCols; ++x)
#pragma unroll
                for (int j = 0; j < S; ++j)
                  acc[q][x] += v[x + j] * wk[i][j];
          }
        }
      }
      T *dst = out + (int64_t(plane) * OH + oh0) * OW + ow0;
#pragma unroll
      for (int q = 0; q < kStencilRows; ++q)
#pragma unroll
        for (int x = 0; x < kStencilCols; ++x)
          if (oh0 + q < OH && ow0 + x < OW)
            dst[q * OW + x] = T(clampTo(acc[q][x], lo, hi));
    }
  }
}

// Input channels per group up to which a grouped convolution runs in
// groupedStencilKernel rather than cuDNN (whose NCHW bf16/f16 grouped
// algorithms run a kernel per group without tensor cores).
constexpr int64_t kStencilMaxGroupChannels = 8;

// A depthwise convolution of any stride and dilation, f32 accumulation. A
// block computes a tile of kDepthwiseRows output rows of one plane (n, k): it
// first copies the input rows they read (zero rows for the padding above and
// below) into shared memory as f32, coalesced, then the block's threads
// compute the tile's outputs from there. 32-bit index math (64-bit division
// is slow on the GPU).
constexpr int kDepthwiseRows = 16;
template <class T>
__global__ void depthwiseKernel(T *out, const T *in, const T *w, const T *bias,
                                int64_t planes, int C, int H, int W, int K,
                                int R, int S, int OH, int OW, int sh, int sw,
                                int ph, int pw, int dh, int dw, int mult,
                                int tileInputRows, float lo, float hi) {
  extern __shared__ float tile[]; // tileInputRows x W
  const int oh0 = blockIdx.x * kDepthwiseRows;
  const int rows = min(kDepthwiseRows, OH - oh0);
  const int ih0 = oh0 * sh - ph;
  const int threads = blockDim.x, t = threadIdx.x;
  for (int64_t plane = blockIdx.y; plane < planes; plane += gridDim.y) {
    const int k = int(plane % K);
    const int64_t n = plane / K;
    const T *src = in + (n * C + k / mult) * int64_t(H) * W;
    __syncthreads(); // the previous plane's tile is no longer read
    for (int i = t; i < tileInputRows * W; i += threads) {
      const int r = i / W, ih = ih0 + r;
      tile[i] =
          ih >= 0 && ih < H ? float(src[int64_t(ih) * W + (i - r * W)]) : 0.f;
    }
    __syncthreads();
    const T *wk = w + int64_t(k) * R * S;
    const float b = bias ? float(bias[k]) : 0.f;
    T *dst = out + (plane * OH + oh0) * OW;
    for (int o = t; o < rows * OW; o += threads) {
      const int r = o / OW, ow = o - r * OW;
      float acc = b;
      for (int i = 0; i < R; ++i) {
        const float *row = tile + (r * sh + i * dh) * W;
        for (int j = 0; j < S; ++j) {
          const int x = ow * sw - pw + j * dw;
          if (x >= 0 && x < W)
            acc += row[x] * float(wk[i * S + j]);
        }
      }
      dst[o] = T(clampTo(acc, lo, hi));
    }
  }
}

template <class T, int R, int S>
void launchGroupedStencil(T *out, const T *in, const T *w, const T *bias,
                          int64_t N, int64_t C, int64_t H, int64_t W, int64_t K,
                          int64_t OH, int64_t OW, int64_t ph, int64_t pw,
                          int64_t groups, float lo, float hi) {
  const int64_t tiles = (OH + kStencilRows - 1) / kStencilRows,
                quads = (OW + kStencilCols - 1) / kStencilCols;
  // A block's threads cover a plane's tiles (whole warps, at most
  // kStencilThreads); a grid of one block per plane, looping past 2^20
  // planes.
  const int64_t perPlane = tiles * quads;
  const int threads = int(
      std::min<int64_t>((perPlane + 31) / 32 * 32, kStencilThreads));
  const int64_t blocks = std::min<int64_t>(N * K, int64_t(1) << 20);
  groupedStencilKernel<T, R, S><<<unsigned(blocks), threads, 0, stream()>>>(
      out, in, w, bias, unsigned(N * K), int(C), int(H), int(W), int(K),
      int(OH), int(OW), int(ph), int(pw), int(C / groups), int(K / groups),
      int(tiles), int(quads), lo, hi);
}

// A grouped convolution of stride 1 and dilation 1 with a square 3, 5 or 7
// window and at most kStencilMaxGroupChannels input channels per group, in
// groupedStencilKernel. Returns false where it does not apply.
template <class T>
inline bool conv2d_grouped_stencil(T *out, const T *in, const T *w,
                                   const T *bias, int64_t N, int64_t C,
                                   int64_t H, int64_t W, int64_t K, int64_t R,
                                   int64_t S, int64_t OH, int64_t OW,
                                   int64_t sh, int64_t sw, int64_t ph,
                                   int64_t pw, int64_t groups, int64_t dh,
                                   int64_t dw, float lo, float hi) {
  const int64_t limit = int64_t(1) << 30;
  if (groups < 2 || C % groups != 0 || K % groups != 0 ||
      C / groups > kStencilMaxGroupChannels || sh != 1 || sw != 1 ||
      dh != 1 || dw != 1 || R != S || (R != 3 && R != 5 && R != 7) ||
      N * K >= (int64_t(1) << 32) || H * W >= limit || OH * OW >= limit ||
      K >= limit || C >= limit)
    return false;
  if (R == 3)
    launchGroupedStencil<T, 3, 3>(out, in, w, bias, N, C, H, W, K, OH, OW, ph,
                                  pw, groups, lo, hi);
  else if (R == 5)
    launchGroupedStencil<T, 5, 5>(out, in, w, bias, N, C, H, W, K, OH, OW, ph,
                                  pw, groups, lo, hi);
  else
    launchGroupedStencil<T, 7, 7>(out, in, w, bias, N, C, H, W, K, OH, OW, ph,
                                  pw, groups, lo, hi);
  check(cudaGetLastError(), "grouped convolution kernel");
  return true;
}

// A depthwise convolution of any stride and dilation in depthwiseKernel.
// `bias` is a T vector of K, or null. Returns false (the caller uses cuDNN)
// where an index would not fit the kernel's 32-bit math or a tile's input
// rows would not fit 48 KiB of shared memory.
template <class T>
inline bool conv2d_depthwise(T *out, const T *in, const T *w, const T *bias,
                             int64_t N, int64_t C, int64_t H, int64_t W,
                             int64_t K, int64_t R, int64_t S, int64_t OH,
                             int64_t OW, int64_t sh, int64_t sw, int64_t ph,
                             int64_t pw, int64_t dh, int64_t dw, float lo,
                             float hi) {
  const int64_t limit = int64_t(1) << 30;
  if (H * W >= limit || OH * OW >= limit || K >= limit || R * S >= limit ||
      (OH + R) * std::max(sh, dh) >= limit ||
      (OW + S) * std::max(sw, dw) >= limit)
    return false;
  // The input rows a tile of output rows reads; the kernel zero-fills those
  // outside the plane.
  const int64_t tileInputRows = (kDepthwiseRows - 1) * sh + (R - 1) * dh + 1;
  const int64_t smem = tileInputRows * W * int64_t(sizeof(float));
  if (smem > 48 * 1024)
    return false;
  const int64_t planes = N * K;
  dim3 grid(unsigned((OH + kDepthwiseRows - 1) / kDepthwiseRows),
            unsigned(std::min<int64_t>(planes, 65535)));
  depthwiseKernel<T><<<grid, kThreads, size_t(smem), stream()>>>(
      out, in, w, bias, planes, int(C), int(H), int(W), int(K), int(R), int(S),
      int(OH), int(OW), int(sh), int(sw), int(ph), int(pw), int(dh), int(dw),
      int(K / C), int(tileInputRows), lo, hi);
  check(cudaGetLastError(), "depthwise convolution kernel");
  return true;
}

template <class T> struct CudnnType;
template <> struct CudnnType<float> {
  static constexpr cudnnDataType_t kData = CUDNN_DATA_FLOAT;
  // TF32 tensor cores only where the build allowed them (--allow-tf32).
  static constexpr cudnnMathType_t kMath =
      DYNOC_ALLOW_TF32 ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH;
};
template <> struct CudnnType<bf16> {
  static constexpr cudnnDataType_t kData = CUDNN_DATA_BFLOAT16;
  static constexpr cudnnMathType_t kMath = CUDNN_TENSOR_OP_MATH;
};
template <> struct CudnnType<f16> {
  static constexpr cudnnDataType_t kData = CUDNN_DATA_HALF;
  static constexpr cudnnMathType_t kMath = CUDNN_TENSOR_OP_MATH;
};

// Code 500 + the cuDNN status, with cuDNN's text.
inline bool dnnCheck(cudnnStatus_t s, const char *what) {
  if (s == CUDNN_STATUS_SUCCESS)
    return true;
  fail(500, what, cudnnGetErrorString(s));
  return false;
}

inline cudnnHandle_t cudnnForThread() {
  static thread_local struct Handle {
    cudnnHandle_t h = nullptr;
    Handle() {
      if (cudnnCreate(&h) != CUDNN_STATUS_SUCCESS)
        h = nullptr;
    }
    ~Handle() {
      if (h)
        cudnnDestroy(h);
    }
  } handle;
  return handle.h;
}

// One convolution shape's tensor, filter and convolution descriptors, for
// the forward pass and both gradients.
struct ConvDescriptors {
  cudnnTensorDescriptor_t x = nullptr, y = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
};
// `key`: N, C, H, W, K, R, S, OH, OW, sh, sw, ph, pw, groups, dh, dw.
template <class T>
inline bool describeConvolution(const int64_t (&key)[16], ConvDescriptors &d) {
  const int64_t N = key[0], C = key[1], H = key[2], W = key[3], K = key[4],
                R = key[5], S = key[6], OH = key[7], OW = key[8], sh = key[9],
                sw = key[10], ph = key[11], pw = key[12], groups = key[13],
                dh = key[14], dw = key[15];
  const cudnnDataType_t dt = CudnnType<T>::kData;
  return dnnCheck(cudnnCreateTensorDescriptor(&d.x), "cuDNN descriptor") &&
         dnnCheck(cudnnCreateTensorDescriptor(&d.y), "cuDNN descriptor") &&
         dnnCheck(cudnnCreateFilterDescriptor(&d.w), "cuDNN descriptor") &&
         dnnCheck(cudnnCreateConvolutionDescriptor(&d.conv),
                  "cuDNN descriptor") &&
         dnnCheck(cudnnSetTensor4dDescriptor(d.x, CUDNN_TENSOR_NCHW, dt, int(N),
                                             int(C), int(H), int(W)),
                  "convolution input") &&
         dnnCheck(cudnnSetTensor4dDescriptor(d.y, CUDNN_TENSOR_NCHW, dt, int(N),
                                             int(K), int(OH), int(OW)),
                  "convolution output") &&
         dnnCheck(cudnnSetFilter4dDescriptor(d.w, dt, CUDNN_TENSOR_NCHW, int(K),
                                             int(C / groups), int(R), int(S)),
                  "convolution weight") &&
         dnnCheck(cudnnSetConvolution2dDescriptor(
                      d.conv, int(ph), int(pw), int(sh), int(sw), int(dh),
                      int(dw), CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
                  "convolution descriptor") &&
         dnnCheck(cudnnSetConvolutionGroupCount(d.conv, int(groups)),
                  "convolution groups") &&
         dnnCheck(cudnnSetConvolutionMathType(d.conv, CudnnType<T>::kMath),
                  "convolution math type");
}

// Whether an algorithm of math type `math` may run on data of type `dt`:
// f32 stays off tensor cores (TF32) unless the build allowed them.
inline bool mathAllowed(cudnnDataType_t dt, cudnnMathType_t math) {
  return !(dt == CUDNN_DATA_FLOAT && !DYNOC_ALLOW_TF32 &&
           (math == CUDNN_TENSOR_OP_MATH ||
            math == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION));
}

// One convolution shape's descriptors and the algorithms cuDNN's heuristic
// ranks, best first, for one pass (Algo: the forward pass's, the input
// gradient's or the weight gradient's), among those whose workspace fits the
// run's GEMM workspace (cuBLASLt and cuDNN calls are ordered on the stream,
// so they share it). A run uses the first; one that cuDNN then refuses for
// these tensors is dropped, on the thread's first (direct, not captured) call.
template <class Algo> struct ConvPlan {
  ConvDescriptors d;
  struct Candidate {
    Algo algo;
    cudnnMathType_t math;
  };
  std::vector<Candidate> candidates;
  size_t next = 0;
  bool ok = false;
};
using ForwardPlan = ConvPlan<cudnnConvolutionFwdAlgo_t>;
using InputGradPlan = ConvPlan<cudnnConvolutionBwdDataAlgo_t>;
using WeightGradPlan = ConvPlan<cudnnConvolutionBwdFilterAlgo_t>;

// The heuristic's ranking and the workspace query of each pass.
inline cudnnStatus_t rankAlgorithms(cudnnHandle_t h, ForwardPlan &p,
                                    cudnnConvolutionFwdAlgoPerf_t *perf,
                                    int *found) {
  return cudnnGetConvolutionForwardAlgorithm_v7(
      h, p.d.x, p.d.w, p.d.conv, p.d.y, CUDNN_CONVOLUTION_FWD_ALGO_COUNT, found,
      perf);
}
inline cudnnStatus_t rankAlgorithms(cudnnHandle_t h, InputGradPlan &p,
                                    cudnnConvolutionBwdDataAlgoPerf_t *perf,
                                    int *found) {
  return cudnnGetConvolutionBackwardDataAlgorithm_v7(
      h, p.d.w, p.d.y, p.d.conv, p.d.x, CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT,
      found, perf);
}
inline cudnnStatus_t rankAlgorithms(cudnnHandle_t h, WeightGradPlan &p,
                                    cudnnConvolutionBwdFilterAlgoPerf_t *perf,
                                    int *found) {
  return cudnnGetConvolutionBackwardFilterAlgorithm_v7(
      h, p.d.x, p.d.y, p.d.conv, p.d.w,
      CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, found, perf);
}
inline cudnnStatus_t workspaceOf(cudnnHandle_t h, const ForwardPlan &p,
                                 cudnnConvolutionFwdAlgo_t a, size_t *bytes) {
  return cudnnGetConvolutionForwardWorkspaceSize(h, p.d.x, p.d.w, p.d.conv,
                                                 p.d.y, a, bytes);
}
inline cudnnStatus_t workspaceOf(cudnnHandle_t h, const InputGradPlan &p,
                                 cudnnConvolutionBwdDataAlgo_t a,
                                 size_t *bytes) {
  return cudnnGetConvolutionBackwardDataWorkspaceSize(h, p.d.w, p.d.y,
                                                      p.d.conv, p.d.x, a, bytes);
}
inline cudnnStatus_t workspaceOf(cudnnHandle_t h, const WeightGradPlan &p,
                                 cudnnConvolutionBwdFilterAlgo_t a,
                                 size_t *bytes) {
  return cudnnGetConvolutionBackwardFilterWorkspaceSize(
      h, p.d.x, p.d.y, p.d.conv, p.d.w, a, bytes);
}
template <class Plan> struct PerfOf;
template <> struct PerfOf<ForwardPlan> {
  using type = cudnnConvolutionFwdAlgoPerf_t;
  static constexpr int kCount = CUDNN_CONVOLUTION_FWD_ALGO_COUNT;
};
template <> struct PerfOf<InputGradPlan> {
  using type = cudnnConvolutionBwdDataAlgoPerf_t;
  static constexpr int kCount = CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT;
};
template <> struct PerfOf<WeightGradPlan> {
  using type = cudnnConvolutionBwdFilterAlgoPerf_t;
  static constexpr int kCount = CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT;
};

// The thread's plan of one pass over the shape `key` (made on first use);
// null after a failure, which it records.
template <class T, class Plan> inline Plan *convPlan(const int64_t (&key)[16]) {
  static thread_local std::unordered_map<PlanKey<16>, Plan, PlanKeyHash<16>>
      plans;
  PlanKey<16> k;
  std::memcpy(k.v, key, sizeof k.v);
  auto it = plans.find(k);
  if (it != plans.end())
    return it->second.ok ? &it->second : nullptr;
  Plan &p = plans[k];
  cudnnHandle_t h = cudnnForThread();
  if (!h) {
    fail(500, "cudnnCreate", "cannot create a cuDNN handle");
    return nullptr;
  }
  if (!describeConvolution<T>(key, p.d))
    return nullptr;
  typename PerfOf<Plan>::type perf[PerfOf<Plan>::kCount];
  int found = 0;
  if (!dnnCheck(rankAlgorithms(h, p, perf, &found),
                "cuDNN's convolution algorithm heuristic"))
    return nullptr;
  for (int i = 0; i < found; ++i) {
    if (perf[i].status != CUDNN_STATUS_SUCCESS ||
        !mathAllowed(CudnnType<T>::kData, perf[i].mathType))
      continue;
    // The heuristic's memory is an estimate; the algorithm's own query is
    // what the call checks.
    size_t bytes = 0;
    if (cudnnSetConvolutionMathType(p.d.conv, perf[i].mathType) !=
            CUDNN_STATUS_SUCCESS ||
        workspaceOf(h, p, perf[i].algo, &bytes) != CUDNN_STATUS_SUCCESS ||
        bytes > size_t(kGemmWorkspaceBytes))
      continue;
    p.candidates.push_back({perf[i].algo, perf[i].mathType});
  }
  if (p.candidates.empty()) {
    fail(500, "cuDNN", "no convolution algorithm fits the 8 MiB workspace");
    return nullptr;
  }
  p.ok = true;
  return &p;
}

// Runs `call(algo)` with the plan's candidates in turn until cuDNN takes
// one; false (recorded) where every one is refused or the call fails.
template <class Plan, class Call>
inline bool runPlan(Plan &p, const char *what, Call call) {
  cudnnHandle_t h = cudnnForThread();
  if (!dnnCheck(cudnnSetStream(h, stream()), "cudnnSetStream"))
    return false;
  cudnnStatus_t st = CUDNN_STATUS_NOT_SUPPORTED;
  for (; p.next < p.candidates.size(); ++p.next) {
    const auto &c = p.candidates[p.next];
    cudnnSetConvolutionMathType(p.d.conv, c.math);
    st = call(h, c.algo);
    if (st != CUDNN_STATUS_BAD_PARAM && st != CUDNN_STATUS_NOT_SUPPORTED)
      break; // run, or failed for a reason another algorithm does not fix
  }
  if (p.next == p.candidates.size()) {
    p.next = 0; // none ran: the next call tries them again
    fail(500, what, "every algorithm refused");
    return false;
  }
  return dnnCheck(st, what);
}

// One cuDNN pass (Plan: forward, input gradient or weight gradient) over
// the shape `key`: `call(handle, algorithm, descriptors, run state, &1, &0)`
// with the plan's algorithms in turn (runPlan). Returns finish().
template <class T, class Plan, class Call>
int convPass(const int64_t (&key)[16], const char *what, Call call) {
  Plan *p = convPlan<T, Plan>(key);
  if (!p)
    return finish();
  RunState &s = state();
  const float one = 1.f, zero = 0.f;
  runPlan(*p, what, [&](cudnnHandle_t h, decltype(p->candidates[0].algo) algo) {
    return call(h, algo, p->d, s, &one, &zero);
  });
  return finish();
}

// out[plane] = clamp(out[plane] + bias[plane % K], lo, hi) over each of
// the NCHW planes of P elements in n = planes * P (bias null: the clamp
// alone). A grid-stride loop over the elements with an unsigned 32-bit index:
// a block per plane row left most threads one element each (83 us for
// MobileNetV2's 77 MB f32 tensor on an H100, 63 us as a plain grid-stride
// loop), and a 64-bit division per element made this pass 10x slower than its
// memory traffic.
// Like the generated elementwise kernels, kPointwiseUnroll elements per
// iteration, loaded before any is stored.
template <class T>
__global__ void channelBiasKernel(T *out, const T *bias, unsigned n,
                                  unsigned K, unsigned P, float lo, float hi) {
  const unsigned step = gridDim.x * blockDim.x;
  for (unsigned i0 = blockIdx.x * blockDim.x + threadIdx.x; i0 < n;
       i0 += kPointwiseUnroll * step) {
    float r[kPointwiseUnroll];
#pragma unroll
    for (int u = 0; u < kPointwiseUnroll; ++u) {
      const unsigned i = i0 + u * step;
      if (i < n)
        r[u] = clampTo(float(out[i]) + (bias ? float(bias[i / P % K]) : 0.f),
                       lo, hi);
    }
#pragma unroll
    for (int u = 0; u < kPointwiseUnroll; ++u)
      if (i0 + u * step < n)
        out[i0 + u * step] = T(r[u]);
  }
}
// The bias and the clamp of a convolution's output, in one pass; none where
// there is neither.
template <class T>
void addChannelBias(T *out, const T *bias, int64_t planes, int64_t K,
                    int64_t P, float lo, float hi) {
  const int64_t n = planes * P;
  if (n == 0 || (!bias && !clamps(lo, hi)))
    return;
  if (n >= (int64_t(1) << 31)) {
    pointwise(n, [=] __device__(int64_t i) {
      out[i] = T(clampTo(
          float(out[i]) + (bias ? float(bias[(i / P) % K]) : 0.f), lo, hi));
    });
    return;
  }
  channelBiasKernel<<<blocksFor(n), kThreads, 0, stream()>>>(
      out, bias, unsigned(n), unsigned(K), unsigned(P), lo, hi);
  check(cudaGetLastError(), "convolution bias kernel");
}

// A 1x1 convolution (stride 1, no padding, one group) on NCHW tensors is a
// GEMM per image, out[n] (K x P) = w (K x C) @ in[n] (C x P) over the P
// pixels: one batched cuBLASLt GEMM with the weight broadcast (stride 0).
// cuDNN runs these NCHW shapes in bf16/f16 without tensor cores
// (implicit_convolve_sgemm, docs/cuda.md); cuBLASLt uses them. The bias is
// a second pass (addChannelBias).
template <class T>
int conv2d_pointwise(T *out, const T *in, const T *w, const T *bias, int64_t N,
                     int64_t C, int64_t P, int64_t K, float lo, float hi) {
  if (int rc = bmm(N, K, P, C, w, int64_t(0), in, C * P, out))
    return rc;
  addChannelBias(out, bias, N * K, K, P, lo, hi);
  return finish();
}

// Never refuses a shape: the CPU library's fallback to im2col is not printed
// for this target.
template <class T>
int conv2d_primitive(ConvSite &, T *out, const T *in, const T *w,
                     const void *bias, int64_t N, int64_t C, int64_t H,
                     int64_t W, int64_t K, int64_t R, int64_t S, int64_t OH,
                     int64_t OW, int64_t sh, int64_t sw, int64_t ph, int64_t pw,
                     int64_t groups, int64_t dh, int64_t dw, float lo,
                     float hi) {
  if (N * K * OH * OW == 0)
    return 0;
  if (C == 0 || R * S == 0) { // an empty sum: the bias alone
    fail(500, "convolution", "a convolution over no input channels");
    return finish();
  }
  if (R == 1 && S == 1 && sh == 1 && sw == 1 && ph == 0 && pw == 0 &&
      groups == 1)
    return conv2d_pointwise(out, in, w, static_cast<const T *>(bias), N, C,
                            H * W, K, lo, hi);
  // Measured on an H100 (docs/cuda.md): faster than cuDNN's NCHW grouped
  // and depthwise algorithms.
  if (conv2d_grouped_stencil(out, in, w, static_cast<const T *>(bias), N, C, H,
                             W, K, R, S, OH, OW, sh, sw, ph, pw, groups, dh, dw,
                             lo, hi))
    return finish();
  if (groups > 1 && groups == C && K % C == 0 &&
      conv2d_depthwise(out, in, w, static_cast<const T *>(bias), N, C, H, W, K,
                       R, S, OH, OW, sh, sw, ph, pw, dh, dw, lo, hi))
    return finish();
  const int64_t key[16] = {N,  C,  H,  W,  K,  R,      S,  OH,
                           OW, sh, sw, ph, pw, groups, dh, dw};
  if (int rc = convPass<T, ForwardPlan>(
          key, "cudnnConvolutionForward",
          [&](cudnnHandle_t h, cudnnConvolutionFwdAlgo_t algo,
              const ConvDescriptors &d, RunState &s, const float *one,
              const float *zero) {
            return cudnnConvolutionForward(h, one, d.x, in, d.w, w, d.conv,
                                           algo, s.gemmWorkspace,
                                           s.gemmWorkspaceBytes, zero, d.y,
                                           out);
          }))
    return rc;
  addChannelBias(out, static_cast<const T *>(bias), N * K, K, OH * OW, lo,
                 hi);
  return finish();
}

// The gradients of a 2-D NCHW convolution (aten.convolution_backward): of
// its input and of its weight through cuDNN, of its bias as a sum per output
// channel. `col` is the CPU library's column scratch, not used here (the
// target asks for none: Target::convolutionBackwardColumns).
template <class T>
int conv2d_backward_input(T *dx, const T *dy, const T *w, int64_t N, int64_t C,
                          int64_t H, int64_t W, int64_t K, int64_t R, int64_t S,
                          int64_t OH, int64_t OW, int64_t sh, int64_t sw,
                          int64_t ph, int64_t pw, int64_t dh, int64_t dw,
                          int64_t groups, void *col) {
  (void)col;
  if (N * C * H * W == 0)
    return 0;
  const int64_t key[16] = {N,  C,  H,  W,  K,  R,      S,  OH,
                           OW, sh, sw, ph, pw, groups, dh, dw};
  return convPass<T, InputGradPlan>(
      key, "cudnnConvolutionBackwardData",
      [&](cudnnHandle_t h, cudnnConvolutionBwdDataAlgo_t algo,
          const ConvDescriptors &d, RunState &s, const float *one,
          const float *zero) {
        return cudnnConvolutionBackwardData(
            h, one, d.w, w, d.y, dy, d.conv, algo, s.gemmWorkspace,
            s.gemmWorkspaceBytes, zero, d.x, dx);
      });
}

template <class T>
int conv2d_backward_weight(T *dW, const T *dy, const T *x, int64_t N, int64_t C,
                           int64_t H, int64_t W, int64_t K, int64_t R,
                           int64_t S, int64_t OH, int64_t OW, int64_t sh,
                           int64_t sw, int64_t ph, int64_t pw, int64_t dh,
                           int64_t dw, int64_t groups, void *col) {
  (void)col;
  const int64_t weights = K * (groups > 0 ? C / groups : 0) * R * S;
  if (weights == 0)
    return 0;
  if (N * OH * OW == 0) { // no output: a zero gradient
    check(cudaMemsetAsync(dW, 0, size_t(weights) * sizeof(T), stream()),
          "convolution weight gradient");
    return finish();
  }
  const int64_t key[16] = {N,  C,  H,  W,  K,  R,      S,  OH,
                           OW, sh, sw, ph, pw, groups, dh, dw};
  return convPass<T, WeightGradPlan>(
      key, "cudnnConvolutionBackwardFilter",
      [&](cudnnHandle_t h, cudnnConvolutionBwdFilterAlgo_t algo,
          const ConvDescriptors &d, RunState &s, const float *one,
          const float *zero) {
        return cudnnConvolutionBackwardFilter(
            h, one, d.x, x, d.y, dy, d.conv, algo, s.gemmWorkspace,
            s.gemmWorkspaceBytes, zero, d.w, dW);
      });
}

// db[k] = the sum of dy[n, k, :] over n: a block per channel, f32
// accumulation.
template <class T>
__global__ void channelSumKernel(T *db, const T *dy, int64_t N, int64_t K,
                                 int64_t P) {
  __shared__ float partial[kThreads / 32];
  const int64_t k = blockIdx.x;
  float acc = 0.f;
  for (int64_t n = 0; n < N; ++n) {
    const T *row = dy + (n * K + k) * P;
    for (int64_t i = threadIdx.x; i < P; i += blockDim.x)
      acc += float(row[i]);
  }
  for (int o = 16; o > 0; o >>= 1)
    acc += __shfl_xor_sync(0xffffffffu, acc, o);
  if ((threadIdx.x & 31) == 0)
    partial[threadIdx.x >> 5] = acc;
  __syncthreads();
  if (threadIdx.x == 0) {
    float sum = 0.f;
    for (int i = 0; i < int(blockDim.x >> 5); ++i)
      sum += partial[i];
    db[k] = T(sum);
  }
}
template <class T>
void conv_backward_bias(T *db, const T *dy, int64_t N, int64_t K, int64_t P) {
  if (K == 0)
    return;
  channelSumKernel<<<unsigned(K), kThreads, 0, stream()>>>(db, dy, N, K, P);
  check(cudaGetLastError(), "convolution bias gradient kernel");
}

#define DYNOC_CONV(T)                                                          \
  template int conv2d_primitive<T>(                                            \
      ConvSite &, T *, const T *, const T *, const void *, int64_t, int64_t,   \
      int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,  \
      int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, float, float);    \
  template int conv2d_backward_input<T>(                                       \
      T *, const T *, const T *, int64_t, int64_t, int64_t, int64_t, int64_t,  \
      int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,  \
      int64_t, int64_t, int64_t, void *);                                      \
  template int conv2d_backward_weight<T>(                                      \
      T *, const T *, const T *, int64_t, int64_t, int64_t, int64_t, int64_t,  \
      int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,  \
      int64_t, int64_t, int64_t, void *);                                      \
  template void conv_backward_bias<T>(T *, const T *, int64_t, int64_t, int64_t);
// Compiled once per element type (CudaBuild.cpp, kLibraryUnits).
DYNOC_CONV(DYNOC_TYPE)

} // namespace dynoc_k
