//===- threads_cuda.cpp - one CUDA model, 8 threads, one stream each ------===//
//
// usage: threads_cuda MODEL.so INPUT_SHAPE... [--int64 HIGH | --bf16]
//                     [--iters N] [--bench]
//
// Loads a model built with --target=cuda, makes a random input of the given
// shape on the GPU, runs it once alone for the reference, then from 8 threads
// at once, each with its own stream and context (CUDA graphs on), and checks
// that every output equals the reference bit for bit. With --bench, prints the
// median latency of a call on one thread instead (the C++ column of
// bench/cuda/run.py). The CUDA runtime is reached through dlopen, as libdynrt
// does: this program links nothing of CUDA.
//
//===----------------------------------------------------------------------===//
#include "dynrt/dynrt.h"

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {
struct Cuda {
  int (*malloc)(void **, size_t);
  int (*memcpy)(void *, const void *, size_t, int);
  int (*streamCreate)(void **, unsigned);
  int (*memcpyAsync)(void *, const void *, size_t, int, void *);
  int (*streamSync)(void *);
  bool load() {
    void *h = dlopen("libcudart.so.13", RTLD_NOW | RTLD_GLOBAL);
    if (!h)
      return false;
    malloc = reinterpret_cast<decltype(malloc)>(dlsym(h, "cudaMalloc"));
    memcpy = reinterpret_cast<decltype(memcpy)>(dlsym(h, "cudaMemcpy"));
    // Non-blocking streams: a serving thread's stream, which the legacy
    // default stream (another thread's plain cudaMemcpy) does not wait on.
    streamCreate = reinterpret_cast<decltype(streamCreate)>(
        dlsym(h, "cudaStreamCreateWithFlags"));
    memcpyAsync =
        reinterpret_cast<decltype(memcpyAsync)>(dlsym(h, "cudaMemcpyAsync"));
    streamSync = reinterpret_cast<decltype(streamSync)>(
        dlsym(h, "cudaStreamSynchronize"));
    return malloc && memcpy && streamCreate && memcpyAsync && streamSync;
  }
} cuda;

[[noreturn]] void die(const std::string &msg) {
  std::fprintf(stderr, "threads_cuda: %s\n", msg.c_str());
  std::exit(1);
}
void check(dynrt_status_t *s) {
  if (s) {
    std::string m = dynrt_status_message(s);
    dynrt_status_free(s);
    die(m);
  }
}

/// Runs `model` once on `in` in `ctx`; returns its outputs' bytes on the
/// host, one after the other.
std::vector<char> runOnce(dynrt_model_t *model, dynrt_context_t *ctx,
                          void *stream, const DLTensor &in) {
  const DLTensor *inputs[] = {&in};
  std::vector<DLManagedTensor *> outs(dynrt_model_num_outputs(model), nullptr);
  check(dynrt_context_run(ctx, inputs, 1, outs.data(), outs.size()));
  cuda.streamSync(stream);
  std::vector<char> host;
  for (DLManagedTensor *out : outs) {
    size_t bytes = (out->dl_tensor.dtype.bits + 7) / 8;
    for (int d = 0; d < out->dl_tensor.ndim; ++d)
      bytes *= out->dl_tensor.shape[d];
    size_t at = host.size();
    host.resize(at + bytes);
    cuda.memcpyAsync(host.data() + at, out->dl_tensor.data, bytes, 2, stream);
    cuda.streamSync(stream);
    out->deleter(out);
  }
  return host;
}
} // namespace

int main(int argc, char **argv) {
  if (argc < 3)
    die("usage: threads_cuda MODEL.so INPUT_SHAPE... [--int64 HIGH | --bf16] "
        "[--iters N] [--bench]");
  std::vector<int64_t> shape;
  int64_t intHigh = -1;
  int iters = 50;
  bool bench = false, bf16 = false;
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--int64" && i + 1 < argc)
      intHigh = std::atoll(argv[++i]);
    else if (a == "--iters" && i + 1 < argc)
      iters = std::atoi(argv[++i]);
    else if (a == "--bench")
      bench = true;
    else if (a == "--bf16")
      bf16 = true;
    else
      shape.push_back(std::atoll(a.c_str()));
  }
  if (!cuda.load())
    die("cannot load libcudart.so.13 (no CUDA runtime on the library path)");
  dynrt_model_t *model = nullptr;
  check(dynrt_model_load(argv[1], &model));
  int64_t numel = 1;
  for (int64_t d : shape)
    numel *= d;
  size_t elem = intHigh > 0 ? 8 : bf16 ? 2 : 4;
  std::vector<char> host(numel * elem);
  std::mt19937 rng(7);
  for (int64_t i = 0; i < numel; ++i) {
    if (intHigh > 0) {
      int64_t v = std::uniform_int_distribution<int64_t>(0, intHigh - 1)(rng);
      std::memcpy(host.data() + i * 8, &v, 8);
    } else {
      float v = std::normal_distribution<float>()(rng);
      uint32_t bits;
      std::memcpy(&bits, &v, 4);
      if (bf16) // the upper half: a bf16 (rounded toward zero)
        std::memcpy(host.data() + i * 2, reinterpret_cast<char *>(&bits) + 2,
                    2);
      else
        std::memcpy(host.data() + i * 4, &v, 4);
    }
  }
  void *data = nullptr;
  if (cuda.malloc(&data, host.size()) ||
      cuda.memcpy(data, host.data(), host.size(), 1))
    die("cannot put the input on the GPU");
  DLDevice dev = dynrt_model_device(model);
  DLTensor in{data,
              dev,
              int32_t(shape.size()),
              intHigh > 0 ? DLDataType{kDLInt, 64, 1}
              : bf16      ? DLDataType{kDLBfloat, 16, 1}
                          : DLDataType{kDLFloat, 32, 1},
              shape.data(),
              nullptr,
              0};

  void *stream0 = nullptr;
  cuda.streamCreate(&stream0, 1);
  dynrt_context_t *ctx0 = nullptr;
  check(dynrt_context_create(model, dev, stream0, &ctx0));
  std::vector<char> ref = runOnce(model, ctx0, stream0, in);
  if (bench) {
    std::vector<double> ms;
    for (int i = 0; i < iters + 20; ++i) {
      auto t0 = std::chrono::steady_clock::now();
      const DLTensor *inputs[] = {&in};
      std::vector<DLManagedTensor *> outs(dynrt_model_num_outputs(model));
      check(dynrt_context_run(ctx0, inputs, 1, outs.data(), outs.size()));
      cuda.streamSync(stream0);
      auto t1 = std::chrono::steady_clock::now();
      for (DLManagedTensor *out : outs)
        out->deleter(out);
      if (i >= 20)
        ms.push_back(
            std::chrono::duration<double, std::milli>(t1 - t0).count());
    }
    std::sort(ms.begin(), ms.end());
    std::printf("median_ms %.4f\n", ms[ms.size() / 2]);
    dynrt_context_release(ctx0);
    dynrt_model_release(model);
    return 0;
  }
  const int kThreads = 8;
  std::vector<int> mismatches(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      void *stream = nullptr;
      cuda.streamCreate(&stream, 1);
      dynrt_context_t *ctx = nullptr;
      check(dynrt_context_create(model, dev, stream, &ctx));
      for (int i = 0; i < iters; ++i)
        if (runOnce(model, ctx, stream, in) != ref)
          ++mismatches[t];
      dynrt_context_release(ctx);
    });
  for (auto &th : threads)
    th.join();
  int bad = 0;
  for (int m : mismatches)
    bad += m;
  std::printf("threads_cuda: %d threads x %d runs of %s: %d mismatches\n",
              kThreads, iters, argv[1], bad);
  dynrt_context_release(ctx0);
  dynrt_model_release(model);
  return bad ? 1 : 0;
}
