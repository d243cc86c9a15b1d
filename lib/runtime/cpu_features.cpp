//===- cpu_features.cpp - the x86 features a model build records ----------===//
#include "dynrt/cpu_features.h"

#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <utility>

namespace dynrt {
namespace {
#if defined(__x86_64__)
/// Where CPUID reports a feature, and the XCR0 state components the OS must
/// save for its registers to be usable (AVX: 0x6; AVX-512: 0xe6; AMX:
/// 0x60000 on top of them). Read from CPUID directly rather than through
/// __builtin_cpu_supports, whose names differ between compilers.
struct FeatureBit {
  const char *name;
  unsigned leaf, subleaf;
  enum Reg { EAX, EBX, ECX, EDX } reg;
  unsigned bit;
  uint64_t xcr0;
};
constexpr uint64_t kAvx = 0x6, kAvx512 = 0xe6, kAmx = 0x60006;
constexpr FeatureBit kFeatureBits[] = {
    {"popcnt", 1, 0, FeatureBit::ECX, 23, 0},
    {"sse4.2", 1, 0, FeatureBit::ECX, 20, 0},
    {"avx", 1, 0, FeatureBit::ECX, 28, kAvx},
    {"avx2", 7, 0, FeatureBit::EBX, 5, kAvx},
    {"fma", 1, 0, FeatureBit::ECX, 12, kAvx},
    {"bmi", 7, 0, FeatureBit::EBX, 3, 0},
    {"bmi2", 7, 0, FeatureBit::EBX, 8, 0},
    {"f16c", 1, 0, FeatureBit::ECX, 29, kAvx},
    {"lzcnt", 0x80000001, 0, FeatureBit::ECX, 5, 0},
    {"movbe", 1, 0, FeatureBit::ECX, 22, 0},
    {"avx512f", 7, 0, FeatureBit::EBX, 16, kAvx512},
    {"avx512bw", 7, 0, FeatureBit::EBX, 30, kAvx512},
    {"avx512cd", 7, 0, FeatureBit::EBX, 28, kAvx512},
    {"avx512dq", 7, 0, FeatureBit::EBX, 17, kAvx512},
    {"avx512vl", 7, 0, FeatureBit::EBX, 31, kAvx512},
    {"avx512vnni", 7, 0, FeatureBit::ECX, 11, kAvx512},
    {"avx512bf16", 7, 1, FeatureBit::EAX, 5, kAvx512},
    {"avx512fp16", 7, 0, FeatureBit::EDX, 23, kAvx512},
    {"avx512vbmi", 7, 0, FeatureBit::ECX, 1, kAvx512},
    {"avx512vbmi2", 7, 0, FeatureBit::ECX, 6, kAvx512},
    {"avx512ifma", 7, 0, FeatureBit::EBX, 21, kAvx512},
    {"avx512vpopcntdq", 7, 0, FeatureBit::ECX, 14, kAvx512},
    {"avx512bitalg", 7, 0, FeatureBit::ECX, 12, kAvx512},
    {"gfni", 7, 0, FeatureBit::ECX, 8, 0},
    {"vpclmulqdq", 7, 0, FeatureBit::ECX, 10, kAvx},
    {"avxvnni", 7, 1, FeatureBit::EAX, 4, kAvx},
    {"amx-tile", 7, 0, FeatureBit::EDX, 24, kAmx},
    {"amx-bf16", 7, 0, FeatureBit::EDX, 22, kAmx},
};

bool hasFeature(const FeatureBit &f) {
  unsigned regs[4] = {0, 0, 0, 0};
  if (__get_cpuid_max(f.leaf & 0x80000000u, nullptr) < f.leaf ||
      !__get_cpuid_count(f.leaf, f.subleaf, &regs[0], &regs[1], &regs[2],
                         &regs[3]) ||
      !(regs[f.reg] >> f.bit & 1))
    return false;
  if (!f.xcr0)
    return true;
  // The OS saves the registers' state (OSXSAVE, then XCR0's bits).
  unsigned a, b, c, d;
  if (!__get_cpuid(1, &a, &b, &c, &d) || !(c >> 27 & 1))
    return false;
  unsigned lo, hi;
  __asm__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  uint64_t xcr0 = uint64_t(hi) << 32 | lo;
  return (xcr0 & f.xcr0) == f.xcr0;
}
#endif

/// Each name with this CPU's answer.
const std::vector<std::pair<std::string, bool>> &hostFeatures() {
  static const std::vector<std::pair<std::string, bool>> table = [] {
    std::vector<std::pair<std::string, bool>> t;
#if defined(__x86_64__)
    for (const FeatureBit &f : kFeatureBits)
      t.emplace_back(f.name, hasFeature(f));
#endif
    return t;
  }();
  return table;
}

std::vector<std::string> split(const std::string &text, char sep) {
  std::vector<std::string> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, sep);)
    if (!item.empty())
      out.push_back(item);
  return out;
}
} // namespace

const std::vector<std::string> &knownCpuFeatures() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const auto &[name, has] : hostFeatures())
      n.push_back(name);
    return n;
  }();
  return names;
}

bool cpuHasFeature(const std::string &feature) {
  if (const char *fake = std::getenv("DYNRT_CPU_FEATURES")) {
    for (const std::string &f : split(fake, ','))
      if (f == feature)
        return true;
    return false;
  }
  for (const auto &[name, has] : hostFeatures())
    if (name == feature)
      return has;
  return false;
}

std::string cpuRecord(const std::string &level,
                      const std::vector<std::string> &features) {
  std::string r = level + ":";
  for (size_t i = 0; i < features.size(); ++i)
    r += (i ? "," : "") + features[i];
  return r;
}

bool parseCpuRecord(const std::string &record, std::string &level,
                    std::vector<std::string> &features) {
  size_t colon = record.find(':');
  if (colon == std::string::npos || colon == 0)
    return false;
  level = record.substr(0, colon);
  features = split(record.substr(colon + 1), ',');
  return true;
}
} // namespace dynrt
