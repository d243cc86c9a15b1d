//===- digest.h - content digests of weights files -------------*- C++ -*-===//
//
// A model's manifest records a digest of its weights sidecar, and libdynrt
// checks it at load, so a weights file changed or replaced after the build is
// refused by name rather than run. The digest is XXH64 (xxhash.com's 64-bit
// hash, about as fast as memory reads): it catches damage and mix-ups, not a
// deliberate forgery (a model .so is code; see docs/runtime.md, "Security").
//
//===----------------------------------------------------------------------===//
#ifndef DYNRT_DIGEST_H
#define DYNRT_DIGEST_H

#include <cstddef>
#include <cstdint>
#include <string>

namespace dynrt {

/// XXH64 of `bytes[0, size)` with `seed`.
uint64_t xxh64(const void *bytes, size_t size, uint64_t seed = 0);

/// The manifest's spelling of a digest of `bytes[0, size)`: "xxh64:" and 16
/// lowercase hex digits.
std::string weightsDigest(const void *bytes, size_t size);

} // namespace dynrt

#endif // DYNRT_DIGEST_H
