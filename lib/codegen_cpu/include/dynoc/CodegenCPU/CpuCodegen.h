//===- CpuCodegen.h - graph module -> C++ -> model .so ----------*- C++ -*-===//
#ifndef DYNOC_CODEGENCPU_CPUCODEGEN_H
#define DYNOC_CODEGENCPU_CPUCODEGEN_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LogicalResult.h"

#include <string>

namespace dynoc {

/// The generated C++ of a graph module and the manifest it embeds.
struct CpuModuleSource {
  std::string cpp;
  std::string manifestJson;
  /// Non-user inputs (weights) the graphs read, by name.
  std::vector<std::string> weightNames;
  /// Per graph, the bytes of its intermediates after buffer reuse (the
  /// workspace a run needs), or -1 when that depends on dynamic dims.
  std::vector<int64_t> workspaceBytes;
  /// Per graph: ops the memory plan runs in place.
  std::vector<unsigned> inPlaceOps;
};

/// Lowers every func of `module` to C++ kernels. `weightsFile` is the sidecar's
/// file name recorded in the manifest, unless `embedWeights` says the weights
/// are linked into the .so (see CpuBuild.cpp). Ops,
/// dtypes or attributes the CPU backend does not support are errors attached to
/// their location.
mlir::LogicalResult emitCpuModule(mlir::ModuleOp module,
                                  const std::string &weightsFile,
                                  bool embedWeights, CpuModuleSource &out);

/// The text of dynoc_kernels.h, which the generated source includes.
const char *cpuKernelPrelude();

struct CpuBuildOptions {
  std::string mlirPath;   // the graph file, for locating its weights
  std::string outputPath; // model .so
  int optLevel = 2;
  bool emitCppOnly = false;  // write the source to outputPath and stop
  bool emitMlirOnly = false; // write the graph after the passes and stop
  bool embedWeights = false; // link the weights into the .so, no sidecar
  std::string compiler;      // default: $CXX, else c++
};

/// Runs the graph passes `dynoc build` applies at `optLevel` (none at -O0;
/// decomposition and fusion from -O1) on `module`.
mlir::LogicalResult runBuildPasses(mlir::ModuleOp module, int optLevel);

/// Builds `module` into a model .so (plus its weights sidecar), reporting
/// progress on stderr. Errors go to the module's diagnostic handler.
mlir::LogicalResult buildCpuModel(mlir::ModuleOp module,
                                  const CpuBuildOptions &options);

} // namespace dynoc

#endif // DYNOC_CODEGENCPU_CPUCODEGEN_H
