//===- safetensors_fuzzer.cpp - the weights reader ------------------------===//
#include "dynrt/safetensors.h"

#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string error;
  auto file = dynrt::SafetensorsFile::fromMemory(data, size, "weights", error);
  if (!file) {
    if (error.empty())
      __builtin_trap(); // a refusal must say why
    return 0;
  }
  // What the runtime does with an accepted file: read each tensor's bytes,
  // which must lie inside the input and match dtype x shape.
  volatile uint8_t sink = 0;
  for (auto &[name, t] : file->tensors()) {
    uint64_t numel = 1;
    for (int64_t d : t.shape)
      numel *= uint64_t(d);
    if (numel * dynrt::dtypeInfo(t.dtype).itemSize != t.nbytes ||
        t.data < data || t.data + t.nbytes > data + size)
      __builtin_trap();
    for (size_t i = 0; i < t.nbytes; ++i)
      sink ^= t.data[i];
    if (file->find(name) != &t)
      __builtin_trap();
  }
  return 0;
}
