//===- CpuCodegen.h - graph module -> C++ -> model .so ----------*- C++ -*-===//
#ifndef DYNOC_CODEGENCPU_CPUCODEGEN_H
#define DYNOC_CODEGENCPU_CPUCODEGEN_H

#include "dynoc/Codegen/Target.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LogicalResult.h"

#include <string>

namespace dynoc {

/// The CPU target: C++ with OpenMP loops, oneDNN and Sleef (CpuTarget.cpp).
const codegen::Target &cpuTarget();

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

/// Builds `module` into a model .so (plus its weights sidecar), reporting
/// progress on stderr. Errors go to the module's diagnostic handler.
mlir::LogicalResult buildCpuModel(mlir::ModuleOp module,
                                  const CpuBuildOptions &options);

} // namespace dynoc

#endif // DYNOC_CODEGENCPU_CPUCODEGEN_H
