//===- Bench.h - timing a model .so through libdynrt ------------*- C++ -*-===//
//
// `dynoc bench MODEL.so` and `dynrt-bench MODEL.so` (the same, without
// MLIR: for the serving machine) share these options and this run.
// docs/runtime.md, "Benchmarking", says what is measured.
//
//===----------------------------------------------------------------------===//
#ifndef DYNOC_TOOLS_BENCH_H
#define DYNOC_TOOLS_BENCH_H

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace dynoc::bench {

struct Options {
  std::string model, jsonPath, profilePath;
  std::vector<std::string> shapes; // NAME=2x3x4 or INDEX=2x3x4
  int warmup = 10, iterations = 0, threads = 1;
  double seconds = 1.0;
  int64_t intHigh = 2;
  unsigned seed = 0;
};

/// Registers the options on `cmd` (a subcommand or a whole program).
void addOptions(CLI::App &cmd, Options &o);

/// Loads the model, times it and prints the figures on stdout; an error is
/// one line "<prog>: error: ..." on stderr. Returns the exit code.
int run(const Options &o, const std::string &prog);

} // namespace dynoc::bench

#endif // DYNOC_TOOLS_BENCH_H
