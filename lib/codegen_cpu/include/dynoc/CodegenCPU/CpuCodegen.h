//===- CpuCodegen.h - graph module -> C++ -> model .so ----------*- C++ -*-===//
#ifndef DYNOC_CODEGENCPU_CPUCODEGEN_H
#define DYNOC_CODEGENCPU_CPUCODEGEN_H

#include "dynoc/Codegen/Build.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LogicalResult.h"

#include <string>

namespace dynoc {

/// The CPU target: C++ with OpenMP loops, oneDNN and Sleef (CpuTarget.cpp).
const codegen::Target &cpuTarget();

/// The text of dynoc_kernels.h, which the generated source includes.
const char *cpuKernelPrelude();

/// Builds `module` into a model .so (plus its weights sidecar), reporting
/// progress on stderr. Errors go to the module's diagnostic handler.
mlir::LogicalResult buildCpuModel(mlir::ModuleOp module,
                                  const codegen::BuildOptions &options);

} // namespace dynoc

#endif // DYNOC_CODEGENCPU_CPUCODEGEN_H
