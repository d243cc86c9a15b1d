// dynoc_kernels_conv.h - 2-D convolution: 1x1 and depthwise ones in NCHW,
// the others through oneDNN primitives (plain, grouped, dilated), cached per
// call site with their weights reordered once. Appended to dynoc_kernels.h in
// the embedded prelude (see lib/codegen_cpu/BUILD.bazel), so it uses that
// file's includes and helpers.

namespace dynoc_k {

// Convolution through a oneDNN primitive (brgconv/jit on blocked layouts),
// created on the first call for a shape and kept with its weights reordered
// into the primitive's layout: later calls only reorder the activations in
// and out. One ConvSite per convolution in the graph; calls from many threads
// share it (creation is locked, running is not).
struct DnnlConv {
  int64_t key[17];
  const float *weights;
  dnnl_primitive_t conv = nullptr, srcReorder = nullptr, dstReorder = nullptr;
  // Weights in PyTorch's layout -> packedW (null: the layouts agree).
  dnnl_primitive_t wReorder = nullptr;
  dnnl_memory_desc_t userSrc, userDst, userW, convSrc, convDst, convW, bias;
  size_t srcBytes = 0, dstBytes = 0, scratchBytes = 0;
  float *packedW = nullptr;
  // Set when the weights at `weights` were written (a training step's
  // write-back, dynrt_model_write_weight): packedW is packed again before
  // the next run. The runtime writes a weight and runs graphs that read it
  // under one lock, so no run reads packedW meanwhile.
  std::atomic<bool> stale{false};
};

struct ConvSite;
// Every ConvSite of the model, linked at static initialization.
inline ConvSite *&convSites() {
  static ConvSite *head = nullptr;
  return head;
}

struct ConvSite {
  std::atomic<DnnlConv *> current{nullptr};
  std::mutex mu;
  std::vector<std::unique_ptr<DnnlConv>> plans; // freed with the model
  ConvSite *next;
  ConvSite() : next(convSites()) { convSites() = this; }
  ~ConvSite() {
    for (auto &p : plans) {
      dnnl_primitive_destroy(p->conv);
      if (p->srcReorder)
        dnnl_primitive_destroy(p->srcReorder);
      if (p->dstReorder)
        dnnl_primitive_destroy(p->dstReorder);
      if (p->wReorder)
        dnnl_primitive_destroy(p->wReorder);
      std::free(p->packedW);
    }
  }
};

// Marks the plans that packed the weights at `w` stale.
inline void conv_weights_changed(const void *w) {
  for (ConvSite *site = convSites(); site; site = site->next) {
    std::lock_guard<std::mutex> lock(site->mu);
    for (auto &p : site->plans)
      if (p->weights == w)
        p->stale.store(true, std::memory_order_release);
  }
}

inline dnnl_engine_t dnnlEngine() {
  static dnnl_engine_t engine = [] {
    dnnl_engine_t e = nullptr;
    return dnnl_engine_create(&e, dnnl_cpu, 0) == dnnl_success ? e : nullptr;
  }();
  return engine;
}

inline dnnl_stream_t dnnlStream() {
  thread_local struct Stream {
    dnnl_stream_t s = nullptr;
    Stream() {
      if (dnnlEngine())
        dnnl_stream_create(&s, dnnlEngine(), dnnl_stream_default_flags);
    }
    ~Stream() {
      if (s)
        dnnl_stream_destroy(s);
    }
  } stream;
  return stream.s;
}

// Runs primitive `p` with (arg, memory desc, pointer) triples; memory objects
// wrap the pointers for this call only.
inline bool dnnlRun(
    dnnl_primitive_t p,
    std::initializer_list<std::tuple<int, const dnnl_memory_desc_t *, void *>>
        args) {
  dnnl_exec_arg_t ea[8];
  int n = 0;
  bool ok = true;
  for (auto &[arg, md, ptr] : args) {
    ea[n].arg = arg;
    ok &= dnnl_memory_create(&ea[n].memory, md, dnnlEngine(), ptr) ==
          dnnl_success;
    ++n;
  }
  ok = ok && dnnl_primitive_execute(p, dnnlStream(), n, ea) == dnnl_success &&
       dnnl_stream_wait(dnnlStream()) == dnnl_success;
  for (int i = 0; i < n; ++i)
    dnnl_memory_destroy(ea[i].memory);
  return ok;
}

// Packs the plan's weights (at plan->weights) into packedW.
inline bool packConvWeights(DnnlConv *plan) {
  if (!plan->wReorder) {
    std::memcpy(plan->packedW, plan->weights,
                dnnl_memory_desc_get_size(&plan->convW));
    return true;
  }
  return dnnlRun(plan->wReorder,
                 {{DNNL_ARG_FROM, &plan->userW,
                   const_cast<float *>(plan->weights)},
                  {DNNL_ARG_TO, &plan->convW, plan->packedW}});
}

inline DnnlConv *makeDnnlConv(const int64_t *key, const float *w) {
  auto plan = std::make_unique<DnnlConv>();
  std::memcpy(plan->key, key, sizeof(plan->key));
  plan->weights = w;
  int64_t N = key[0], C = key[1], H = key[2], W = key[3], K = key[4],
          R = key[5], S = key[6], OH = key[7], OW = key[8], sh = key[9],
          sw = key[10], ph = key[11], pw = key[12], hasBias = key[13],
          G = key[14], dh = key[15], dw = key[16];
  // Grouped weights are [G, K/G, C/G, R, S] to oneDNN: the same bytes as
  // PyTorch's [K, C/G, R, S].
  dnnl_dims_t src = {N, C, H, W}, b = {K}, dst = {N, K, OH, OW};
  dnnl_dims_t wt = {K, C, R, S}, gwt = {G, K / G, C / G, R, S};
  const int wRank = G == 1 ? 4 : 5;
  const dnnl_format_tag_t wTag = G == 1 ? dnnl_oihw : dnnl_goihw;
  dnnl_memory_desc_t anySrc, anyW, anyDst, &userW = plan->userW;
  if (dnnl_memory_desc_init_by_tag(&plan->userSrc, 4, src, dnnl_f32,
                                   dnnl_nchw) ||
      dnnl_memory_desc_init_by_tag(&plan->userDst, 4, dst, dnnl_f32,
                                   dnnl_nchw) ||
      dnnl_memory_desc_init_by_tag(&userW, wRank, G == 1 ? wt : gwt, dnnl_f32,
                                   wTag) ||
      dnnl_memory_desc_init_by_tag(&plan->bias, 1, b, dnnl_f32, dnnl_x) ||
      dnnl_memory_desc_init_by_tag(&anySrc, 4, src, dnnl_f32,
                                   dnnl_format_tag_any) ||
      dnnl_memory_desc_init_by_tag(&anyW, wRank, G == 1 ? wt : gwt, dnnl_f32,
                                   dnnl_format_tag_any) ||
      dnnl_memory_desc_init_by_tag(&anyDst, 4, dst, dnnl_f32,
                                   dnnl_format_tag_any))
    return nullptr;
  dnnl_convolution_desc_t cd;
  // oneDNN counts dilation from 0 (PyTorch's 1 is its 0).
  dnnl_dims_t strides = {sh, sw}, pad = {ph, pw}, dil = {dh - 1, dw - 1};
  if (dnnl_dilated_convolution_forward_desc_init(
          &cd, dnnl_forward_inference, dnnl_convolution_direct, &anySrc, &anyW,
          hasBias ? &plan->bias : nullptr, &anyDst, strides, dil, pad, pad))
    return nullptr;
  dnnl_primitive_attr_t attr;
  dnnl_primitive_attr_create(&attr);
  dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user);
  dnnl_primitive_desc_t pd = nullptr;
  dnnl_status_t st =
      dnnl_primitive_desc_create(&pd, &cd, attr, dnnlEngine(), nullptr);
  dnnl_primitive_attr_destroy(attr);
  if (st)
    return nullptr;
  plan->convSrc = *dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 0);
  plan->convDst = *dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0);
  plan->convW = *dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
  plan->scratchBytes = dnnl_memory_desc_get_size(
      dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0));
  st = dnnl_primitive_create(&plan->conv, pd);
  dnnl_primitive_desc_destroy(pd);
  if (st)
    return nullptr;
  auto reorder = [](const dnnl_memory_desc_t &from,
                    const dnnl_memory_desc_t &to, dnnl_primitive_t *out) {
    if (dnnl_memory_desc_equal(&from, &to))
      return true;
    dnnl_primitive_desc_t rpd;
    if (dnnl_reorder_primitive_desc_create(&rpd, &from, dnnlEngine(), &to,
                                           dnnlEngine(), nullptr))
      return false;
    bool ok = dnnl_primitive_create(out, rpd) == dnnl_success;
    dnnl_primitive_desc_destroy(rpd);
    return ok;
  };
  if (!reorder(plan->userSrc, plan->convSrc, &plan->srcReorder) ||
      !reorder(plan->convDst, plan->userDst, &plan->dstReorder) ||
      !reorder(userW, plan->convW, &plan->wReorder))
    return nullptr;
  plan->srcBytes =
      plan->srcReorder ? dnnl_memory_desc_get_size(&plan->convSrc) : 0;
  plan->dstBytes =
      plan->dstReorder ? dnnl_memory_desc_get_size(&plan->convDst) : 0;
  // The weights, once (again when they are written), in the primitive's
  // layout.
  size_t wBytes = dnnl_memory_desc_get_size(&plan->convW);
  plan->packedW =
      static_cast<float *>(std::aligned_alloc(64, (wBytes + 63) / 64 * 64));
  if (!plan->packedW || !packConvWeights(plan.get()))
    return nullptr;
  return plan.release();
}

// Per-thread scratch for the reordered activations and oneDNN's scratchpad.
inline char *threadScratch(size_t bytes) {
  thread_local std::unique_ptr<char, decltype(&std::free)> buf(nullptr,
                                                               &std::free);
  thread_local size_t size = 0;
  if (bytes > size) {
    buf.reset(
        static_cast<char *>(std::aligned_alloc(64, (bytes + 63) / 64 * 64)));
    size = buf ? bytes : 0;
  }
  return buf.get();
}

// Convolutions that run in NCHW as they are, with no reorder into oneDNN's
// blocked layout and back (which, for these, costs more than the arithmetic):
// a 1x1 convolution with stride 1 and no padding is one GEMM per image, and a
// depthwise convolution (one input channel per group) a small stencil per
// channel, memory-bound, vectorized along the output row.
inline bool conv2d_is_pointwise(int64_t R, int64_t S, int64_t sh, int64_t sw,
                                int64_t ph, int64_t pw, int64_t groups) {
  return R == 1 && S == 1 && sh == 1 && sw == 1 && ph == 0 && pw == 0 &&
         groups == 1;
}

inline bool conv2d_is_depthwise(int64_t C, int64_t K, int64_t groups) {
  return groups > 1 && groups == C && K % C == 0;
}

// out[n] = w[K, C] @ in[n][C, H*W] (+ bias[k] on each row).
inline int conv2d_pointwise(float *out, const float *in, const float *w,
                            const float *bias, int64_t N, int64_t C, int64_t K,
                            int64_t P) {
  for (int64_t n = 0; n < N; ++n) {
    float *dst = out + n * K * P;
    if (bias) {
#pragma omp parallel for if (K * P > kParallelGrain)
      for (int64_t k = 0; k < K; ++k)
        std::fill(dst + k * P, dst + (k + 1) * P, bias[k]);
    }
    if (int rc = gemm(false, false, K, P, C, 1.f, w, in + n * C * P,
                      bias ? 1.f : 0.f, dst))
      return rc;
  }
  return 0;
}

// One output plane of a depthwise convolution from a zero-padded input plane
// (`pitch` floats per row): every tap is in bounds, so the loops along the
// output row have no edge cases. Innermost loops run along the row so that
// they vectorize at -O2 too; a kernel row of 3 taps is one pass.
inline void depthwise_plane(float *dst, const float *padded, int64_t pitch,
                            const float *wk, float b, int64_t R, int64_t S,
                            int64_t OH, int64_t OW, int64_t sh, int64_t sw,
                            int64_t dh, int64_t dw) {
  for (int64_t oh = 0; oh < OH; ++oh) {
    float *o = dst + oh * OW;
#pragma omp simd
    for (int64_t ow = 0; ow < OW; ++ow)
      o[ow] = b;
    for (int64_t r = 0; r < R; ++r) {
      const float *p = padded + (oh * sh + r * dh) * pitch;
      const float *wr = wk + r * S;
      if (S == 3 && sw == 1) {
        const float w0 = wr[0], w1 = wr[1], w2 = wr[2];
        const float *p1 = p + dw, *p2 = p + 2 * dw;
#pragma omp simd
        for (int64_t ow = 0; ow < OW; ++ow)
          o[ow] += w0 * p[ow] + w1 * p1[ow] + w2 * p2[ow];
        continue;
      }
      for (int64_t s = 0; s < S; ++s) {
        const float ws = wr[s];
        const float *ps = p + s * dw;
#pragma omp simd
        for (int64_t ow = 0; ow < OW; ++ow)
          o[ow] += ws * ps[ow * sw];
      }
    }
  }
}

// Output channel k reads input channel k / (K / C); w is [K, 1, R, S].
inline void conv2d_depthwise(float *out, const float *in, const float *w,
                             const float *bias, int64_t N, int64_t C, int64_t H,
                             int64_t W, int64_t K, int64_t R, int64_t S,
                             int64_t OH, int64_t OW, int64_t sh, int64_t sw,
                             int64_t ph, int64_t pw, int64_t dh, int64_t dw) {
  const int64_t mult = K / C;
  // The padded plane holds every row and column any output reads.
  const int64_t PH = std::max(H + ph, (OH - 1) * sh + (R - 1) * dh + 1) + ph;
  const int64_t pitch = std::max(W + pw, (OW - 1) * sw + (S - 1) * dw + 1) + pw;
#pragma omp parallel for if (N * K * OH * OW * R * S > kParallelGrain)
  for (int64_t nk = 0; nk < N * K; ++nk) {
    thread_local std::vector<float> padded;
    const int64_t n = nk / K, k = nk % K;
    padded.resize(size_t(PH * pitch));
    // The padded copy of input channel k / mult: zero borders, rows copied.
    const float *img = in + (n * C + k / mult) * H * W;
    float *p = padded.data();
    std::fill(p, p + ph * pitch, 0.f);
    for (int64_t h = 0; h < H; ++h) {
      float *row = p + (h + ph) * pitch;
      std::fill(row, row + pw, 0.f);
      std::memcpy(row + pw, img + h * W, size_t(W) * sizeof(float));
      std::fill(row + pw + W, row + pitch, 0.f);
    }
    std::fill(p + (H + ph) * pitch, p + PH * pitch, 0.f);
    const float *wk = w + k * R * S;
    const float b = bias ? bias[k] : 0.f;
    float *dst = out + nk * OH * OW;
    depthwise_plane(dst, padded.data(), pitch, wk, b, R, S, OH, OW, sh, sw, dh,
                    dw);
  }
}

// The library's convolution primitive: the NCHW kernels above where they
// apply, else oneDNN's. Returns 0 on success, -1 if oneDNN cannot take this
// convolution (the caller falls back to conv2d's im2col + GEMM), a positive
// code on a library error.
inline int conv2d_primitive(ConvSite &site, float *out, const float *in,
                            const float *w, const float *bias, int64_t N,
                            int64_t C, int64_t H, int64_t W, int64_t K,
                            int64_t R, int64_t S, int64_t OH, int64_t OW,
                            int64_t sh, int64_t sw, int64_t ph, int64_t pw,
                            int64_t groups, int64_t dh, int64_t dw) {
  if (N * C * H * W == 0 || N * K * OH * OW == 0)
    return -1;
  // 1x1 and depthwise (stride 1 along the row) convolutions stay in NCHW.
  if (conv2d_is_pointwise(R, S, sh, sw, ph, pw, groups))
    return conv2d_pointwise(out, in, w, bias, N, C, K, OH * OW);
  if (conv2d_is_depthwise(C, K, groups) && sw == 1) {
    conv2d_depthwise(out, in, w, bias, N, C, H, W, K, R, S, OH, OW, sh, sw, ph,
                     pw, dh, dw);
    return 0;
  }
  if (!dnnlEngine())
    return -1;
  const int64_t key[17] = {N,      C,  H,  W,  K,  R,  S,
                           OH,     OW, sh, sw, ph, pw, bias != nullptr,
                           groups, dh, dw};
  DnnlConv *plan = site.current.load(std::memory_order_acquire);
  if (!plan || plan->weights != w || std::memcmp(plan->key, key, sizeof(key))) {
    std::lock_guard<std::mutex> lock(site.mu);
    plan = nullptr;
    for (auto &p : site.plans)
      if (p->weights == w && !std::memcmp(p->key, key, sizeof(key)))
        plan = p.get();
    if (!plan) {
      plan = makeDnnlConv(key, w);
      if (!plan)
        return -1;
      site.plans.emplace_back(plan);
    }
    site.current.store(plan, std::memory_order_release);
  }
  if (plan->stale.load(std::memory_order_acquire)) {
    std::lock_guard<std::mutex> lock(site.mu);
    if (plan->stale.load(std::memory_order_relaxed)) {
      if (!packConvWeights(plan))
        return 1;
      plan->stale.store(false, std::memory_order_release);
    }
  }
  size_t scratch = plan->srcBytes + plan->dstBytes + plan->scratchBytes + 192;
  char *buf = threadScratch(scratch);
  if (!buf)
    return -1;
  auto align = [](char *p) {
    return reinterpret_cast<char *>((reinterpret_cast<uintptr_t>(p) + 63) &
                                    ~uintptr_t(63));
  };
  char *srcBuf = align(buf), *dstBuf = align(srcBuf + plan->srcBytes),
       *pad = align(dstBuf + plan->dstBytes);
  void *src = plan->srcReorder ? static_cast<void *>(srcBuf)
                               : static_cast<void *>(const_cast<float *>(in));
  void *dst =
      plan->dstReorder ? static_cast<void *>(dstBuf) : static_cast<void *>(out);
  if (plan->srcReorder &&
      !dnnlRun(plan->srcReorder,
               {{DNNL_ARG_FROM, &plan->userSrc, const_cast<float *>(in)},
                {DNNL_ARG_TO, &plan->convSrc, src}}))
    return 1;
  dnnl_memory_desc_t padMd;
  dnnl_dims_t padDims = {int64_t(plan->scratchBytes)};
  dnnl_memory_desc_init_by_tag(&padMd, 1, padDims, dnnl_u8, dnnl_x);
  bool ok =
      bias ? dnnlRun(plan->conv,
                     {{DNNL_ARG_SRC, &plan->convSrc, src},
                      {DNNL_ARG_WEIGHTS, &plan->convW, plan->packedW},
                      {DNNL_ARG_BIAS, &plan->bias, const_cast<float *>(bias)},
                      {DNNL_ARG_DST, &plan->convDst, dst},
                      {DNNL_ARG_SCRATCHPAD, &padMd, pad}})
           : dnnlRun(plan->conv,
                     {{DNNL_ARG_SRC, &plan->convSrc, src},
                      {DNNL_ARG_WEIGHTS, &plan->convW, plan->packedW},
                      {DNNL_ARG_DST, &plan->convDst, dst},
                      {DNNL_ARG_SCRATCHPAD, &padMd, pad}});
  if (!ok)
    return 1;
  if (plan->dstReorder &&
      !dnnlRun(plan->dstReorder, {{DNNL_ARG_FROM, &plan->convDst, dst},
                                  {DNNL_ARG_TO, &plan->userDst, out}}))
    return 1;
  return 0;
}

} // namespace dynoc_k

// The model ABI's weight-change notice (model_abi.h): libdynrt calls it after
// it writes the weight at `w`.
extern "C" __attribute__((visibility("default"))) void
dynoc_model_weight_changed(const void *w) {
  dynoc_k::conv_weights_changed(w);
}
