//===- manifest_fuzzer.cpp - the manifest a model .so embeds -------------===//
#include "dynrt/manifest.h"

#include <cstdint>
#include <string>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  dynrt::Manifest manifest;
  std::string error;
  std::string_view json(reinterpret_cast<const char *>(data), size);
  if (!dynrt::parseManifest(json, manifest, error)) {
    if (error.empty())
      __builtin_trap(); // a refusal must say why
    return 0;
  }
  // An accepted manifest keeps the promises the runtime relies on.
  for (const dynrt::GraphSpec &g : manifest.graphs) {
    if (g.numUserInputs > g.inputs.size())
      __builtin_trap();
    for (const dynrt::Guard &guard : g.guards) {
      if (guard.kind == "tensor_match" &&
          (guard.input < 0 || size_t(guard.input) >= g.numUserInputs))
        __builtin_trap();
      if (guard.kind == "size" && guard.terms.size() % 3 != 0)
        __builtin_trap();
      for (size_t k = 0; guard.kind == "size" && k < guard.terms.size(); k += 3)
        if (guard.terms[k] < 0 || size_t(guard.terms[k]) >= g.numUserInputs)
          __builtin_trap();
    }
    for (const dynrt::Mutation &m : g.mutations)
      if (m.output >= g.outputs.size())
        __builtin_trap();
  }
  return 0;
}
