//===- main.cpp - run a dynoc model from C++ through libdynrt -------------===//
//
//   run_model MODEL.so INPUT.npy [EXPECTED.npy]
//
// Loads the model, runs it on the input, prints the output and, given the
// PyTorch eager result, the largest relative difference and whether it matches.
//
//===----------------------------------------------------------------------===//
#include "dynrt/dynrt.hpp"
#include "dynrt/npy.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

int main(int argc, char **argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s MODEL.so INPUT.npy [EXPECTED.npy]\n",
                 argv[0]);
    return 2;
  }
  dynrt::NpyArray input, expected;
  std::string error;
  if (!dynrt::readNpy(argv[2], input, error) ||
      (argc > 3 && !dynrt::readNpy(argv[3], expected, error))) {
    std::fprintf(stderr, "run_model: error: %s\n", error.c_str());
    return 1;
  }
  try {
    dynrt::Model model(argv[1]);
    DLTensor x = input.view();
    auto outputs = model.run({&x});
    const DLTensor &y = outputs[0]->dl_tensor;
    size_t n = 1;
    std::printf("output shape: [");
    for (int d = 0; d < y.ndim; ++d) {
      std::printf("%s%lld", d ? ", " : "", (long long)y.shape[d]);
      n *= y.shape[d];
    }
    std::printf("]\n");
    const float *out = static_cast<const float *>(y.data);
    for (size_t i = 0; i < n; ++i)
      std::printf("%s% .5f%s", i % 8 ? " " : "  ", out[i],
                  i % 8 == 7 || i + 1 == n ? "\n" : "");
    if (argc > 3) {
      if (expected.numel() != n || expected.dtype != dynrt::DType::F32) {
        std::printf("MISMATCH: expected %zu float32 values\n",
                    expected.numel());
        return 1;
      }
      const float *ref = reinterpret_cast<const float *>(expected.data.data());
      double maxAbs = 0, maxRef = 0;
      for (size_t i = 0; i < n; ++i) {
        maxAbs = std::max(maxAbs, (double)std::fabs(out[i] - ref[i]));
        maxRef = std::max(maxRef, (double)std::fabs(ref[i]));
      }
      double rel = maxRef > 0 ? maxAbs / maxRef : maxAbs;
      bool ok = rel <= 1e-5;
      std::printf("max relative difference vs PyTorch eager: %.3g -> %s\n", rel,
                  ok ? "MATCH (<= 1e-5)" : "MISMATCH");
      return ok ? 0 : 1;
    }
    return 0;
  } catch (const dynrt::Error &e) {
    std::fprintf(stderr, "run_model: error: %s\n", e.what());
    return 1;
  }
}
