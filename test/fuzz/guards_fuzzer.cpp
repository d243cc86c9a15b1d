//===- guards_fuzzer.cpp - guards against any caller's tensors -----------===//
//
// The input is a manifest (JSON), a NUL byte, then bytes that describe the
// user inputs a caller passes: for each, its rank, dtype, device, sizes and
// strides. Each graph's guards and signature are checked against them, as
// dynrt_context_run does before it runs a variant.
//
//===----------------------------------------------------------------------===//
#include "guards.h"

#include "dynrt/manifest.h"

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace {
/// Reads the caller's tensors from the bytes after the manifest; a byte
/// missing reads as 0.
struct Bytes {
  const uint8_t *p, *end;
  uint8_t next() { return p < end ? *p++ : 0; }
  int64_t size() {
    uint8_t b = next();
    // Small sizes mostly; a high bit makes a huge one, to find overflow.
    return b & 0x80 ? int64_t(b & 0x7f) << 40 : int64_t(b & 0x3f);
  }
};

struct CallerTensor {
  std::vector<int64_t> shape, strides;
  DLTensor t{};
};

const DLDataType kDTypes[] = {{kDLFloat, 32, 1},       {kDLFloat, 16, 1},
                              {kDLBfloat, 16, 1},      {kDLInt, 64, 1},
                              {6 /* kDLBool */, 8, 1}, {kDLInt, 7, 1}};
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const uint8_t *nul = static_cast<const uint8_t *>(std::memchr(data, 0, size));
  size_t jsonSize = nul ? size_t(nul - data) : size;
  dynrt::Manifest manifest;
  std::string error;
  if (!dynrt::parseManifest(
          std::string_view(reinterpret_cast<const char *>(data), jsonSize),
          manifest, error))
    return 0;
  Bytes bytes{nul ? nul + 1 : data + size, data + size};
  static char dummy;
  for (const dynrt::GraphSpec &graph : manifest.graphs) {
    std::vector<CallerTensor> tensors(graph.numUserInputs);
    std::vector<const DLTensor *> inputs;
    for (CallerTensor &c : tensors) {
      int ndim = bytes.next() % 10;
      uint8_t flags = bytes.next();
      for (int d = 0; d < ndim; ++d)
        c.shape.push_back(bytes.size());
      if (flags & 1)
        for (int d = 0; d < ndim; ++d)
          c.strides.push_back(bytes.size());
      c.t.data = flags & 2 ? nullptr : &dummy;
      c.t.device = {flags & 4 ? kDLCUDA : kDLCPU, 0};
      c.t.ndim = ndim;
      c.t.dtype = kDTypes[(flags >> 3) % (sizeof(kDTypes) / sizeof(*kDTypes))];
      c.t.shape = c.shape.data();
      c.t.strides = c.strides.empty() ? nullptr : c.strides.data();
      inputs.push_back(&c.t);
    }
    std::string failure;
    if (!dynrt::checkGuards(graph, inputs.data(), failure) ||
        !dynrt::checkSignature(graph, inputs.data(), failure)) {
      if (failure.empty())
        __builtin_trap(); // a failed guard must say which
    }
  }
  return 0;
}
