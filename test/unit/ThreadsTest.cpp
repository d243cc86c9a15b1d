//===- ThreadsTest.cpp - one model, many threads --------------------------===//
//
// 8 threads x 1000 calls on one loaded model, with batch sizes that change
// from call to call, through per-thread contexts (runtime-allocated and
// caller-provided outputs) and the context-free entry point. Every result is
// checked. Run it under --config=tsan to check for data races.
//
//===----------------------------------------------------------------------===//
#include "ModelFixtures.h"

#include "dynrt/dynrt.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <cmath>
#include <thread>

using fixtures::HostTensor;

TEST_CASE("8 threads x 1000 calls with mixed shapes on one model") {
  dynrt::Model model(fixtures::buildModel("dyn_mlp", "dyn_mlp"));
  constexpr int kThreads = 8, kCalls = 1000;
  // Inputs are made up front (the generator is not what is under test).
  std::vector<HostTensor> xs, ys;
  std::vector<std::vector<float>> refs;
  for (int b = 1; b <= 9; ++b) {
    xs.push_back(fixtures::makeTensor({b, 16}, 10 + b));
    ys.push_back(fixtures::makeTensor({b, 8}, 20 + b));
    refs.push_back(fixtures::dynMlpReference(xs.back(), ys.back()));
  }
  std::atomic<int> wrong{0}, errors{0}, done{0};
  auto worker = [&](int t) {
    dynrt::Context context(model);
    for (int i = 0; i < kCalls; ++i) {
      size_t k = (t * 7 + i * 3) % xs.size();
      DLTensor xv = xs[k].view(), yv = ys[k].view();
      HostTensor out({xs[k].shape[0], 8});
      DLTensor ov = out.view();
      const float *got = nullptr;
      std::vector<dynrt::Tensor> owned;
      try {
        switch (i % 3) {
        case 0:
          owned = context.run({&xv, &yv});
          got = static_cast<float *>(owned[0]->dl_tensor.data);
          break;
        case 1:
          context.runInto({&xv, &yv}, {&ov});
          got = out.data.data();
          break;
        default:
          owned = model.run({&xv, &yv});
          got = static_cast<float *>(owned[0]->dl_tensor.data);
        }
      } catch (const dynrt::Error &) {
        ++errors;
        continue;
      }
      for (size_t j = 0; j < refs[k].size(); ++j)
        if (std::fabs(got[j] - refs[k][j]) >
            1e-5f * (1 + std::fabs(refs[k][j]))) {
          ++wrong;
          break;
        }
      ++done;
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back(worker, t);
  for (auto &th : threads)
    th.join();
  CHECK(errors == 0);
  CHECK(wrong == 0);
  CHECK(done == kThreads * kCalls);
}
