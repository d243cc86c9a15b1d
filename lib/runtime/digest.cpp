//===- digest.cpp - XXH64, from its specification -------------------------===//
//
// https://github.com/Cyan4973/xxHash/blob/dev/doc/xxhash_spec.md, "XXH64".
//
//===----------------------------------------------------------------------===//
#include "dynrt/digest.h"

#include <cstdio>
#include <cstring>

namespace dynrt {
namespace {
constexpr uint64_t kP1 = 0x9E3779B185EBCA87ULL;
constexpr uint64_t kP2 = 0xC2B2AE3D27D4EB4FULL;
constexpr uint64_t kP3 = 0x165667B19E3779F9ULL;
constexpr uint64_t kP4 = 0x85EBCA77C2B2AE63ULL;
constexpr uint64_t kP5 = 0x27D4EB2F165667C5ULL;

inline uint64_t rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }
inline uint64_t read64(const uint8_t *p) {
  uint64_t v;
  std::memcpy(&v, p, 8); // little-endian hosts only, as the runtime
  return v;
}
inline uint32_t read32(const uint8_t *p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
inline uint64_t round(uint64_t acc, uint64_t lane) {
  acc += lane * kP2;
  return rotl(acc, 31) * kP1;
}
inline uint64_t merge(uint64_t acc, uint64_t lane) {
  acc ^= round(0, lane);
  return acc * kP1 + kP4;
}
} // namespace

uint64_t xxh64(const void *bytes, size_t size, uint64_t seed) {
  const uint8_t *p = static_cast<const uint8_t *>(bytes);
  const uint8_t *end = p + size;
  uint64_t h;
  if (size >= 32) {
    uint64_t v1 = seed + kP1 + kP2, v2 = seed + kP2, v3 = seed, v4 = seed - kP1;
    for (; end - p >= 32; p += 32) {
      v1 = round(v1, read64(p));
      v2 = round(v2, read64(p + 8));
      v3 = round(v3, read64(p + 16));
      v4 = round(v4, read64(p + 24));
    }
    h = rotl(v1, 1) + rotl(v2, 7) + rotl(v3, 12) + rotl(v4, 18);
    h = merge(h, v1);
    h = merge(h, v2);
    h = merge(h, v3);
    h = merge(h, v4);
  } else {
    h = seed + kP5;
  }
  h += uint64_t(size);
  for (; end - p >= 8; p += 8)
    h = rotl(h ^ round(0, read64(p)), 27) * kP1 + kP4;
  if (end - p >= 4) {
    h = rotl(h ^ (uint64_t(read32(p)) * kP1), 23) * kP2 + kP3;
    p += 4;
  }
  for (; p < end; ++p)
    h = rotl(h ^ (uint64_t(*p) * kP5), 11) * kP1;
  h ^= h >> 33;
  h *= kP2;
  h ^= h >> 29;
  h *= kP3;
  h ^= h >> 32;
  return h;
}

std::string weightsDigest(const void *bytes, size_t size) {
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx",
                static_cast<unsigned long long>(xxh64(bytes, size)));
  return std::string("xxh64:") + hex;
}

} // namespace dynrt
