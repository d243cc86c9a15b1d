//===- BuildCommand.cpp - dynoc build -------------------------------------===//
#include "Commands.h"

#include "dynoc/CodegenCPU/CpuCodegen.h"
#include "dynoc/IR/GraphIO.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

namespace dynoc::cli {

int buildGraphFile(const std::string &mlirPath, const std::string &outPath,
                   int optLevel, const std::string &emit, bool embedWeights) {
  mlir::DialectRegistry registry;
  registerGraphDialects(registry);
  mlir::MLIRContext context(registry);
  llvm::SourceMgr sourceMgr;
  mlir::SourceMgrDiagnosticHandler handler(sourceMgr, &context);
  auto module = parseGraphFile(mlirPath, context, sourceMgr);
  if (!module)
    return 1;
  CpuBuildOptions options;
  options.mlirPath = mlirPath;
  options.outputPath = outPath;
  options.optLevel = optLevel;
  options.emitCppOnly = emit == "cpp";
  options.emitMlirOnly = emit == "mlir";
  options.embedWeights = embedWeights;
  return mlir::failed(buildCpuModel(*module, options)) ? 1 : 0;
}

void addBuildCommand(CLI::App &app, int &exitCode) {
  auto *cmd = app.add_subcommand(
      "build", "Compile a captured graph file (.mlir) into a model .so that "
               "libdynrt runs. Its weights go to <MODEL>.weights.safetensors "
               "beside it.");
  struct Opts {
    std::string input, output, target = "cpu", emit = "so";
    int optLevel = 2;
    bool embedWeights = false;
  };
  auto opts = std::make_shared<Opts>();
  cmd->add_option("GRAPH", opts->input, "graph file written by 'dynoc capture'")
      ->required();
  cmd->add_option("-o,--output", opts->output, "model .so to write")
      ->required();
  cmd->add_option("--target", opts->target, "code generator: cpu")
      ->check(CLI::IsMember({"cpu"}))
      ->capture_default_str();
  cmd->add_option("-O", opts->optLevel,
                  "optimization level (0-3): -O0 runs no graph passes; from "
                  "-O1 decomposition and fusion run; also the C++ compiler's "
                  "level")
      ->check(CLI::Range(0, 3))
      ->capture_default_str();
  cmd->add_option("--emit", opts->emit,
                  "so: the model; cpp: only the generated C++ source; mlir: "
                  "only the graph after the passes")
      ->check(CLI::IsMember({"so", "cpp", "mlir"}))
      ->capture_default_str();
  cmd->add_flag("--embed-weights", opts->embedWeights,
                "link the weights into the .so instead of writing the "
                "<MODEL>.weights.safetensors sidecar");
  cmd->callback([opts, &exitCode] {
    exitCode = buildGraphFile(opts->input, opts->output, opts->optLevel,
                              opts->emit, opts->embedWeights);
  });
}

} // namespace dynoc::cli
