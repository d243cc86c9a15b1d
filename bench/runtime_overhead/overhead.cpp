//===- overhead.cpp - libdynrt's per-call overhead from a C++ caller ------===//
//
//   overhead MODEL.so ITERATIONS
//
// For a model whose inputs all have static shapes, times (median of 25 rounds
// of ITERATIONS calls, per call):
//   raw:      the model's run function called directly through its C ABI
//             (the kernels alone);
//   run_into: dynrt_context_run_into, caller-provided output buffers;
//   run:      dynrt_context_run, outputs allocated by the runtime (and freed).
// The overhead of a path is its time minus raw. Prints one JSON object.
//
//===----------------------------------------------------------------------===//
#include "dynrt/dynrt.hpp"
#include "dynrt/model_abi.h"

#include <nlohmann/json.hpp>

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

namespace {
dynrt::HostTensor make(const nlohmann::json &spec) {
  std::vector<int64_t> shape;
  for (int64_t d : spec["shape"]) {
    if (d < 0)
      throw std::runtime_error("the overhead bench needs static shapes");
    shape.push_back(d);
  }
  return dynrt::HostTensor(shape, 0.5f);
}

double nsPerCall(long iters, const std::function<void()> &call) {
  std::vector<double> rounds;
  for (int r = 0; r < 25; ++r) {
    auto start = std::chrono::steady_clock::now();
    for (long i = 0; i < iters; ++i)
      call();
    auto end = std::chrono::steady_clock::now();
    rounds.push_back(
        std::chrono::duration<double, std::nano>(end - start).count() / iters);
  }
  std::sort(rounds.begin(), rounds.end());
  return rounds[rounds.size() / 2];
}
} // namespace

int main(int argc, char **argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s MODEL.so ITERATIONS\n", argv[0]);
    return 2;
  }
  long iters = std::stol(argv[2]);
  try {
    dynrt::Model model(argv[1]);
    dynrt::Context context(model);
    auto manifest = nlohmann::json::parse(model.manifest());
    const auto &graph = manifest["graphs"][0];
    std::vector<dynrt::HostTensor> inputs, outputs;
    for (const auto &in : graph["inputs"])
      if (in["kind"] == "user")
        inputs.push_back(make(in));
    for (const auto &out : graph["outputs"])
      outputs.push_back(make(out));
    std::vector<DLTensor> inViews, outViews;
    for (auto &t : inputs)
      inViews.push_back(t.view());
    for (auto &t : outputs)
      outViews.push_back(t.view());
    std::vector<const DLTensor *> in, out;
    for (auto &v : inViews)
      in.push_back(&v);
    for (auto &v : outViews)
      out.push_back(&v);

    // The raw ABI, for the kernels' own time (no weights in this bench).
    void *handle = dlopen(argv[1], RTLD_NOW | RTLD_NOLOAD);
    auto runFn = reinterpret_cast<dynoc_graph_run_fn>(
        dlsym(handle, graph["symbol"].get<std::string>().c_str()));
    if (!runFn || graph["inputs"].size() != inputs.size())
      throw std::runtime_error("the overhead bench needs a model without "
                               "weights");
    std::vector<const int64_t *> inShapes;
    std::vector<void *> args, outPtrs;
    for (auto &t : inputs)
      inShapes.push_back(t.shape.data()), args.push_back(t.data.data());
    for (auto &t : outputs)
      outPtrs.push_back(t.data.data());
    alignas(64) static char workspace[1 << 16];

    double raw = nsPerCall(iters, [&] {
      runFn(inShapes.data(), args.data(), outPtrs.data(), workspace);
    });
    double runInto = nsPerCall(iters, [&] { context.runInto(in, out); });
    double run = nsPerCall(iters, [&] { context.run(in); });
    nlohmann::json result = {{"raw_ns", raw},
                             {"run_into_ns", runInto},
                             {"run_ns", run},
                             {"iterations", iters}};
    std::printf("%s\n", result.dump().c_str());
    return 0;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "overhead: error: %s\n", e.what());
    return 1;
  }
}
