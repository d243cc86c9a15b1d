//===- main.cpp - train a model from C++ with libdynrt alone --------------===//
//
//   train STEP.so X.npy Y.npy [STEPS] [EXPECTED_LOSSES.npy]
//         [--lr LR] [--checkpoint OUT.safetensors] [--step-times]
//
// STEP.so is a training step graph built by `dynoc build step_N.mlir`: each
// call runs forward, backward and the optimizer update, and libdynrt writes the
// updated parameters and optimizer state back into the model's own copy of its
// weights. This loop calls it STEPS times (default 20) on the batch (X, Y) and
// prints the loss of each step; given eager's losses of the same steps, it
// prints the largest relative difference and whether the curves match. The
// median step time comes last. --lr sets every learning rate of the step
// (the weights named `...param_groups[G]['lr']`) before the first step;
// --checkpoint writes the parameters and optimizer state after the last step
// as safetensors (libdynrt's weight API, docs/training.md); --step-times
// prints each step's time (bench/train/run.py reads them).
//
// A step built with --target=cuda runs on the GPU: X and Y are copied to the
// device once, each step runs on the context's stream (replaying a CUDA graph
// from the third step on) and its loss is copied back, which waits for the
// step; the step time includes that wait.
//
// STEP.so may instead bundle a step's forward, backward and update graphs
// (`dynoc build graph_3.mlir graph_4.mlir graph_5.mlir`): each step then
// calls its functions in order on one context (dynrt_context_call), the
// forward with (X, Y), the others with the inputs they name: X and Y, and a
// gradient seed of ones for each `grad(graph_N.output_K)` (output K of the
// forward is the loss printed).
//
//===----------------------------------------------------------------------===//
#include "dynrt/dynrt.hpp"
#include "dynrt/npy.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

namespace {
/// One training step of a bundled model: its functions in build order on
/// `ctx`; returns the loss (the forward output a gradient seed is for).
float stepByFunctions(dynrt::Model &model, dynrt::Context &ctx,
                      const std::vector<std::string> &functions,
                      const DLTensor &x, const DLTensor &y,
                      std::vector<dynrt::HostTensor> &seeds) {
  std::vector<std::string> regionInputs = model.functionInputs(functions[0]);
  std::vector<const DLTensor *> forward = ctx.call(functions[0], {&x, &y});
  const DLTensor *loss = forward.at(0);
  for (size_t f = 1; f < functions.size(); ++f) {
    std::vector<const DLTensor *> in;
    for (const std::string &name : model.functionInputs(functions[f])) {
      if (name.rfind("grad(", 0) == 0) {
        // ones like the forward output it is the gradient of
        size_t k = std::stoul(name.substr(name.rfind('_') + 1));
        const DLTensor *o = forward.at(k);
        loss = o;
        seeds.emplace_back(std::vector<int64_t>(o->shape, o->shape + o->ndim),
                           1.f);
        in.push_back(nullptr);
        continue;
      }
      auto it = std::find(regionInputs.begin(), regionInputs.end(), name);
      if (it == regionInputs.end())
        throw std::runtime_error("function '" + functions[f] + "' takes '" +
                                 name +
                                 "', which is neither a region input nor a "
                                 "gradient seed");
      in.push_back(it == regionInputs.begin() ? &x : &y);
    }
    std::vector<DLTensor> views;
    views.reserve(seeds.size());
    for (dynrt::HostTensor &t : seeds)
      views.push_back(t.view());
    for (size_t i = 0, next = 0; i < in.size(); ++i)
      if (!in[i])
        in[i] = &views[next++];
    ctx.call(functions[f], in);
    seeds.clear();
  }
  return *static_cast<const float *>(loss->data);
}
} // namespace

int main(int argc, char **argv) {
  // Options first; the rest are positional.
  std::vector<char *> positional = {argv[0]};
  const char *lrText = nullptr, *checkpoint = nullptr;
  bool stepTimes = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--step-times")
      stepTimes = true;
    else if ((arg == "--lr" || arg == "--checkpoint") && i + 1 < argc)
      (arg == "--lr" ? lrText : checkpoint) = argv[++i];
    else if (arg.rfind("--", 0) == 0) {
      std::fprintf(stderr, "train: error: unknown option '%s'\n", argv[i]);
      return 2;
    } else
      positional.push_back(argv[i]);
  }
  argc = int(positional.size());
  argv = positional.data();
  if (argc < 4) {
    std::fprintf(stderr,
                 "usage: %s STEP.so X.npy Y.npy [STEPS] [EXPECTED_LOSSES.npy] "
                 "[--lr LR] [--checkpoint OUT.safetensors] [--step-times]\n",
                 argv[0]);
    return 2;
  }
  char *lrEnd = nullptr;
  float lr = lrText ? std::strtof(lrText, &lrEnd) : 0.f;
  if (lrText && (lrEnd == lrText || *lrEnd || !(lr > 0))) {
    std::fprintf(stderr,
                 "train: error: --lr must be a positive number, got '%s'\n",
                 lrText);
    return 2;
  }
  int steps = argc > 4 ? std::atoi(argv[4]) : 20;
  if (steps <= 0) {
    std::fprintf(stderr,
                 "train: error: STEPS must be a positive integer, got '%s'\n",
                 argv[4]);
    return 2;
  }
  dynrt::NpyArray x, y, expected;
  std::string error;
  if (!dynrt::readNpy(argv[2], x, error) ||
      !dynrt::readNpy(argv[3], y, error) ||
      (argc > 5 && !dynrt::readNpy(argv[5], expected, error))) {
    std::fprintf(stderr, "train: error: %s\n", error.c_str());
    return 1;
  }
  if (argc > 5 && (expected.dtype != dynrt::DType::F32 ||
                   expected.numel() < size_t(steps))) {
    std::fprintf(stderr,
                 "train: error: '%s' must hold at least %d float32 losses\n",
                 argv[5], steps);
    return 1;
  }
  try {
    dynrt::Model model(argv[1]);
    if (model.numInputs() != 2) {
      std::fprintf(stderr,
                   "train: error: '%s' takes %zu inputs; a training step of "
                   "examples/train/train.py takes 2 (x, y)\n",
                   argv[1], model.numInputs());
      return 1;
    }
    if (lrText) {
      dynrt::HostTensor value({}, lr);
      DLTensor v = value.view();
      int set = 0;
      for (const std::string &name : model.weightNames())
        if (name.size() > 6 && name.compare(name.size() - 6, 6, "['lr']") == 0)
          model.writeWeight(name, v), ++set;
      if (!set) {
        std::fprintf(stderr,
                     "train: error: '%s' has no learning-rate weight (its "
                     "optimizer has no dynoc rule: docs/training.md)\n",
                     argv[1]);
        return 1;
      }
    }
    DLTensor xv = x.view(), yv = y.view();
    const DLDevice device = model.device();
    const bool onDevice = device.device_type != kDLCPU;
    // The batch on the model's device, once.
    std::vector<dynrt::Tensor> deviceBatch;
    if (onDevice) {
      for (DLTensor *v : {&xv, &yv}) {
        deviceBatch.push_back(model.allocTensor(
            v->dtype, std::vector<int64_t>(v->shape, v->shape + v->ndim)));
        model.copyTensor(*v, deviceBatch.back()->dl_tensor);
        *v = deviceBatch.back()->dl_tensor;
      }
    }
    double worst = 0;
    std::vector<double> micros;
    std::vector<std::string> functions = model.functions();
    if (onDevice && functions.size() > 1) {
      std::fprintf(stderr, "train: error: '%s' bundles %zu functions; on a "
                   "GPU this loop runs a whole-step model only\n",
                   argv[1], functions.size());
      return 1;
    }
    dynrt::Context ctx(model, device);
    dynrt::HostTensor hostLoss(std::vector<int64_t>{}); // a 0-d f32 loss
    std::vector<dynrt::HostTensor> seeds;
    // The first step's outputs (the loss, the new parameters and optimizer
    // state that libdynrt copies into the model's weights) are the buffers
    // every later step writes: a step allocating fresh ones spent about 15% of
    // an MLP's step in page faults.
    std::vector<dynrt::Tensor> outputs;
    std::vector<const DLTensor *> outputViews;
    for (int step = 0; step < steps; ++step) {
      auto start = std::chrono::steady_clock::now();
      float loss;
      if (functions.size() > 1) {
        loss = stepByFunctions(model, ctx, functions, xv, yv, seeds);
      } else {
        // The context's workspace is reused too.
        if (outputs.empty()) {
          outputs = ctx.run({&xv, &yv});
          for (const dynrt::Tensor &t : outputs)
            outputViews.push_back(&t->dl_tensor);
        } else {
          ctx.runInto({&xv, &yv}, outputViews);
        }
        if (onDevice) {
          DLTensor lv = hostLoss.view();
          model.copyTensor(outputs[0]->dl_tensor, lv); // waits for the step
          loss = hostLoss.data[0];
        } else {
          loss = *static_cast<const float *>(outputs[0]->dl_tensor.data);
        }
      }
      micros.push_back(std::chrono::duration<double, std::micro>(
                           std::chrono::steady_clock::now() - start)
                           .count());
      std::printf("step %d loss %.7g\n", step + 1, loss);
      if (stepTimes)
        std::printf("step time us %.1f\n", micros.back());
      if (argc > 5) {
        float want =
            reinterpret_cast<const float *>(expected.data.data())[step];
        worst = std::max(worst, std::fabs(double(loss) - want) /
                                    std::max(std::fabs(double(want)), 1e-12));
      }
    }
    if (checkpoint) {
      model.saveWeights(checkpoint);
      std::printf("wrote checkpoint %s\n", checkpoint);
    }
    std::sort(micros.begin(), micros.end());
    std::printf("median step time %.1f us\n", micros[micros.size() / 2]);
    if (argc > 5) {
      bool ok = worst <= 1e-5;
      std::printf(
          "max relative difference vs PyTorch eager's losses: %.3g -> %s\n",
          worst, ok ? "MATCH (<= 1e-5)" : "MISMATCH");
      return ok ? 0 : 1;
    }
  } catch (const std::exception &e) {
    std::fprintf(stderr, "train: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
