//===- cpu_features.h - the x86 features a model build records -*- C++ -*-===//
//
// A model built for a CPU level (`dynoc build --cpu=x86-64-v4`) or for the
// build machine (`--cpu=native`) records the instruction-set extensions its
// code may use; libdynrt refuses to load it on a CPU that lacks one, with a
// status naming it, instead of dying of SIGILL. The names are GCC's (as -march
// and __builtin_cpu_supports spell them).
//
//===----------------------------------------------------------------------===//
#ifndef DYNRT_CPU_FEATURES_H
#define DYNRT_CPU_FEATURES_H

#include <string>
#include <vector>

namespace dynrt {
/// Every feature a record may name, in a fixed order.
const std::vector<std::string> &knownCpuFeatures();

/// Whether this CPU has `feature` (false for a name not in knownCpuFeatures).
/// DYNRT_CPU_FEATURES, a comma-separated list, replaces what the CPU reports:
/// tests fake a CPU with it.
bool cpuHasFeature(const std::string &feature);

/// The record a model carries in its ".dynoc.cpu" section: "LEVEL:f1,f2,...".
std::string cpuRecord(const std::string &level,
                      const std::vector<std::string> &features);

/// Parses a record; false if it is malformed.
bool parseCpuRecord(const std::string &record, std::string &level,
                    std::vector<std::string> &features);
} // namespace dynrt

#endif // DYNRT_CPU_FEATURES_H
