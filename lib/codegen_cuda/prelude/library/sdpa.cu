// sdpa.cu - bf16/f16 scaled dot-product attention through cuDNN's fused
// flash-attention engines (the ones torch's CUDA SDPA runs on Hopper), built
// with cuDNN's graph API through the cuDNN frontend's headers. Part of the
// kernel library (dynoc_cuda_library.cuh); compiled only where cuDNN's and
// the frontend's headers are installed (lib/codegen_cuda/CudaBuild.cpp,
// DYNOC_CUDNN_SDPA). libcudnn is opened at run time (the frontend's dynamic
// loading), so a model's .so does not depend on it at load: where it cannot
// be opened, or cuDNN has no engine for a shape, attention() runs the
// library's own kernels (nn.cu) instead.
#define NV_CUDNN_FRONTEND_USE_DYNAMIC_LOADING 1
#include "dynoc_cuda_core.cuh"

#include <cudnn_frontend.h>
#include <dlfcn.h>

#include <cstring>
#include <memory>
#include <unordered_map>

// The frontend resolves cuDNN's symbols through this handle.
namespace cudnn_frontend {
void *cudnn_dlhandle = nullptr;
} // namespace cudnn_frontend

namespace dynoc_k {
namespace fe = cudnn_frontend;

namespace {

// libcudnn, opened once per process (the one torch loaded, where it did).
bool cudnnOpened() {
  static const bool opened = [] {
    fe::cudnn_dlhandle = dlopen("libcudnn.so.9", RTLD_NOW | RTLD_GLOBAL);
    return fe::cudnn_dlhandle != nullptr;
  }();
  return opened;
}

// The calling thread's cuDNN handle (cuDNN's handles are not shared across
// threads that run concurrently); null where cuDNN cannot be opened. It and
// the thread's plans are never destroyed: at process exit the CUDA driver
// and cuDNN may be gone before a thread's destructors run (torch leaks its
// cuDNN handles for the same reason).
cudnnHandle_t sdpaHandle() {
  static thread_local cudnnHandle_t handle = [] {
    cudnnHandle_t h = nullptr;
    try {
      if (cudnnOpened() &&
          fe::detail::create_handle(&h) != CUDNN_STATUS_SUCCESS)
        h = nullptr;
    } catch (...) { // a symbol the loaded cuDNN lacks
      h = nullptr;
    }
    return h;
  }();
  return handle;
}

template <class T> constexpr fe::DataType_t feType() {
  if constexpr (std::is_same<T, bf16>::value)
    return fe::DataType_t::BFLOAT16;
  else if constexpr (std::is_same<T, f16>::value)
    return fe::DataType_t::HALF;
  else
    return fe::DataType_t::FLOAT;
}

// Tensor ids in the graph's variant pack.
enum : int64_t { kQ = 1, kK, kV, kO, kBias };

// One attention problem's built graph; `ok` false where cuDNN has no engine
// for it (then the library's kernels run it, every time).
struct SdpaPlan {
  std::shared_ptr<fe::graph::Graph> graph;
  int64_t workspace = 0;
  bool ok = false;
};

template <class T, class TM>
bool buildPlan(SdpaPlan &p, cudnnHandle_t h, int64_t B, int64_t H,
               int64_t Hk, int64_t L, int64_t S, int64_t E, int64_t Ev,
               float scale, bool causal, const int64_t *ms, bool masked) {
  auto g = std::make_shared<fe::graph::Graph>();
  g->set_io_data_type(feType<T>())
      .set_intermediate_data_type(fe::DataType_t::FLOAT)
      .set_compute_data_type(fe::DataType_t::FLOAT);
  auto tensor = [&](int64_t uid, const char *name, int64_t heads, int64_t rows,
                    int64_t dims) {
    return g->tensor(fe::graph::Tensor_attributes()
                         .set_uid(uid)
                         .set_name(name)
                         .set_dim({B, heads, rows, dims})
                         .set_stride({heads * rows * dims, rows * dims, dims,
                                      1}));
  };
  auto q = tensor(kQ, "Q", H, L, E);
  auto k = tensor(kK, "K", Hk, S, E);
  auto v = tensor(kV, "V", Hk, S, Ev);
  auto options = fe::graph::SDPA_attributes()
                     .set_name("dynoc_sdpa")
                     .set_generate_stats(false)
                     .set_causal_mask(causal)
                     .set_attn_scale(scale);
  if (masked) {
    // The additive mask as cuDNN's bias: a broadcast batch or head dim is
    // a dim of 1 (stride 0 along the query rows is passed as such).
    auto bias = g->tensor(
        fe::graph::Tensor_attributes()
            .set_uid(kBias)
            .set_name("bias")
            .set_data_type(feType<TM>())
            .set_dim({ms[0] ? B : 1, ms[1] ? H : 1, L, S})
            .set_stride({ms[0], ms[1], ms[2], ms[3]}));
    options.set_bias(bias);
  }
  auto [o, stats] = g->sdpa(q, k, v, options);
  (void)stats;
  o->set_uid(kO).set_output(true).set_dim({B, H, L, Ev}).set_stride(
      {H * L * Ev, L * Ev, Ev, 1});
  if (!g->validate().is_good() || !g->build_operation_graph(h).is_good() ||
      !g->create_execution_plans({fe::HeurMode_t::A}).is_good() ||
      !g->check_support(h).is_good() || !g->build_plans(h).is_good())
    return false;
  if (!g->get_workspace_size(p.workspace).is_good() ||
      p.workspace > kGemmWorkspaceBytes)
    return false;
  p.graph = std::move(g);
  return true;
}

} // namespace

template <class T, class TM>
bool cudnnAttention(T *out, const T *q, const T *k, const T *v,
                    int64_t batchHeads, int64_t L, int64_t S, int64_t E,
                    int64_t Ev, double scale, bool causal, const TM *mask,
                    const int64_t *ms, int64_t heads, int64_t group) {
  if (heads <= 0 || group <= 0 || batchHeads % heads || heads % group)
    return false;
  cudnnHandle_t h = sdpaHandle();
  if (!h)
    return false;
  const int64_t B = batchHeads / heads, H = heads, Hk = heads / group;
  const bool masked = mask != nullptr;
  float fscale = float(scale);
  int32_t scaleBits;
  std::memcpy(&scaleBits, &fscale, sizeof scaleBits);
  using Key = PlanKey<16>;
  Key key{{int64_t(feType<T>()), int64_t(feType<TM>()), B, H, Hk, L, S, E, Ev,
           scaleBits, causal, masked, masked ? ms[0] : 0, masked ? ms[1] : 0,
           masked ? ms[2] : 0, masked ? ms[3] : 0}};
  using Plans = std::unordered_map<Key, SdpaPlan, PlanKeyHash<16>>;
  static thread_local Plans &plans = *new Plans(); // never destroyed (above)
  auto it = plans.find(key);
  if (it == plans.end()) {
    SdpaPlan &p = plans[key];
    try {
      p.ok = buildPlan<T, TM>(p, h, B, H, Hk, L, S, E, Ev, fscale, causal, ms,
                              masked);
    } catch (...) { // the frontend's exceptions stay in here
      p.ok = false;
    }
    it = plans.find(key);
  }
  SdpaPlan &p = it->second;
  if (!p.ok)
    return false;
  std::unordered_map<int64_t, void *> pack = {
      {kQ, const_cast<T *>(q)},
      {kK, const_cast<T *>(k)},
      {kV, const_cast<T *>(v)},
      {kO, out}};
  if (masked)
    pack[kBias] = const_cast<TM *>(mask);
  try {
    if (fe::detail::set_stream(h, stream()) != CUDNN_STATUS_SUCCESS)
      return false;
    return p.graph->execute(h, pack, state().gemmWorkspace).is_good();
  } catch (...) {
    return false;
  }
}

#define DYNOC_CUDNN_ATTENTION(T, TM)                                           \
  template bool cudnnAttention<T, TM>(T *, const T *, const T *, const T *,    \
                                      int64_t, int64_t, int64_t, int64_t,      \
                                      int64_t, double, bool, const TM *,       \
                                      const int64_t *, int64_t, int64_t);
// Compiled once per 2-byte element type (CudaBuild.cpp, kLibraryUnits).
DYNOC_CUDNN_ATTENTION(DYNOC_TYPE, float)
DYNOC_CUDNN_ATTENTION(DYNOC_TYPE, bf16)
DYNOC_CUDNN_ATTENTION(DYNOC_TYPE, f16)

} // namespace dynoc_k
