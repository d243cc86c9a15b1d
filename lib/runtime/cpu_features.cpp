//===- cpu_features.cpp - the x86 features a model build records ----------===//
#include "dynrt/cpu_features.h"

#include <cstdlib>
#include <sstream>
#include <utility>

namespace dynrt {
namespace {
/// Each name with this CPU's answer. __builtin_cpu_supports takes a string
/// literal only, hence the table.
const std::vector<std::pair<std::string, bool>> &hostFeatures() {
  static const std::vector<std::pair<std::string, bool>> table = [] {
    std::vector<std::pair<std::string, bool>> t;
#if defined(__x86_64__)
    __builtin_cpu_init();
#define DYNRT_FEATURE(name) t.emplace_back(name, __builtin_cpu_supports(name));
#else
#define DYNRT_FEATURE(name) t.emplace_back(name, false);
#endif
    DYNRT_FEATURE("popcnt")
    DYNRT_FEATURE("sse4.2")
    DYNRT_FEATURE("avx")
    DYNRT_FEATURE("avx2")
    DYNRT_FEATURE("fma")
    DYNRT_FEATURE("bmi")
    DYNRT_FEATURE("bmi2")
    DYNRT_FEATURE("f16c")
    DYNRT_FEATURE("lzcnt")
    DYNRT_FEATURE("movbe")
    DYNRT_FEATURE("avx512f")
    DYNRT_FEATURE("avx512bw")
    DYNRT_FEATURE("avx512cd")
    DYNRT_FEATURE("avx512dq")
    DYNRT_FEATURE("avx512vl")
    DYNRT_FEATURE("avx512vnni")
    DYNRT_FEATURE("avx512bf16")
    DYNRT_FEATURE("avx512fp16")
    DYNRT_FEATURE("avx512vbmi")
    DYNRT_FEATURE("avx512vbmi2")
    DYNRT_FEATURE("avx512ifma")
    DYNRT_FEATURE("avx512vpopcntdq")
    DYNRT_FEATURE("avx512bitalg")
    DYNRT_FEATURE("gfni")
    DYNRT_FEATURE("vpclmulqdq")
    DYNRT_FEATURE("avxvnni")
    DYNRT_FEATURE("amx-tile")
    DYNRT_FEATURE("amx-bf16")
#undef DYNRT_FEATURE
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
