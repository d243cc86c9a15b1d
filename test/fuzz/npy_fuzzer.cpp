//===- npy_fuzzer.cpp - the .npy reader (dynoc run's inputs) --------------===//
#include "dynrt/npy.h"

#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  dynrt::NpyArray array;
  std::string error;
  if (dynrt::parseNpy(data, size, "input.npy", array, error)) {
    // What a caller does next: view it and read every element.
    DLTensor t = array.view();
    size_t nbytes = array.numel() * dynrt::dtypeInfo(array.dtype).itemSize;
    if (nbytes != array.data.size() || t.ndim != int(array.shape.size()))
      __builtin_trap();
    volatile uint8_t sink = 0;
    for (uint8_t b : array.data)
      sink ^= b;
  } else if (error.empty()) {
    __builtin_trap(); // a refusal must say why
  }
  return 0;
}
