// dynoc_kernels_conv.h - 2-D convolution through oneDNN primitives (plain,
// grouped, depthwise, dilated), cached per call site with their weights
// reordered once. Appended to dynoc_kernels.h in the embedded prelude (see
// lib/codegen_cpu/BUILD.bazel), so it uses that file's includes and helpers.

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
  dnnl_memory_desc_t userSrc, userDst, convSrc, convDst, convW, bias;
  size_t srcBytes = 0, dstBytes = 0, scratchBytes = 0;
  float *packedW = nullptr;
};

struct ConvSite {
  std::atomic<DnnlConv *> current{nullptr};
  std::mutex mu;
  std::vector<std::unique_ptr<DnnlConv>> plans; // freed with the model
  ~ConvSite() {
    for (auto &p : plans) {
      dnnl_primitive_destroy(p->conv);
      if (p->srcReorder)
        dnnl_primitive_destroy(p->srcReorder);
      if (p->dstReorder)
        dnnl_primitive_destroy(p->dstReorder);
      std::free(p->packedW);
    }
  }
};

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
  dnnl_memory_desc_t anySrc, anyW, anyDst, userW;
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
  dnnl_primitive_t wReorder = nullptr;
  if (!reorder(plan->userSrc, plan->convSrc, &plan->srcReorder) ||
      !reorder(plan->convDst, plan->userDst, &plan->dstReorder) ||
      !reorder(userW, plan->convW, &wReorder))
    return nullptr;
  plan->srcBytes =
      plan->srcReorder ? dnnl_memory_desc_get_size(&plan->convSrc) : 0;
  plan->dstBytes =
      plan->dstReorder ? dnnl_memory_desc_get_size(&plan->convDst) : 0;
  // The weights, once, in the primitive's layout.
  size_t wBytes = dnnl_memory_desc_get_size(&plan->convW);
  plan->packedW =
      static_cast<float *>(std::aligned_alloc(64, (wBytes + 63) / 64 * 64));
  if (!plan->packedW)
    return nullptr;
  if (wReorder) {
    bool ok =
        dnnlRun(wReorder, {{DNNL_ARG_FROM, &userW, const_cast<float *>(w)},
                           {DNNL_ARG_TO, &plan->convW, plan->packedW}});
    dnnl_primitive_destroy(wReorder);
    if (!ok)
      return nullptr;
  } else {
    std::memcpy(plan->packedW, w, wBytes);
  }
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

// The library's convolution primitive (oneDNN here). Returns 0 on success,
// -1 if oneDNN cannot take this convolution (the caller falls back to
// conv2d's im2col + GEMM).
inline int conv2d_primitive(ConvSite &site, float *out, const float *in,
                            const float *w, const float *bias, int64_t N,
                            int64_t C, int64_t H, int64_t W, int64_t K,
                            int64_t R, int64_t S, int64_t OH, int64_t OW,
                            int64_t sh, int64_t sw, int64_t ph, int64_t pw,
                            int64_t groups, int64_t dh, int64_t dw) {
  if (!dnnlEngine() || N * C * H * W == 0 || N * K * OH * OW == 0)
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
