//===- BenchCommand.cpp - dynoc bench (tools/bench) -----------------------===//
#include "Commands.h"

#include "tools/bench/Bench.h"

#include <memory>

namespace dynoc::cli {

void addBenchCommand(CLI::App &app, int &exitCode) {
  auto *cmd = app.add_subcommand(
      "bench",
      "Time a model .so through libdynrt on random inputs shaped from its "
      "manifest: latency percentiles, throughput, memory (dynrt-bench is the "
      "same without the rest of dynoc).");
  auto o = std::make_shared<bench::Options>();
  bench::addOptions(*cmd, *o);
  cmd->callback([o, &exitCode] { exitCode = bench::run(*o, "dynoc bench"); });
}

} // namespace dynoc::cli
