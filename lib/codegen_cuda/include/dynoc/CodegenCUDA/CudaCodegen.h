//===- CudaCodegen.h - graph module -> CUDA C++ -> model .so ----*- C++ -*-===//
#ifndef DYNOC_CODEGENCUDA_CUDACODEGEN_H
#define DYNOC_CODEGENCUDA_CUDACODEGEN_H

#include "dynoc/Codegen/Build.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LogicalResult.h"

#include <string>
#include <vector>

namespace dynoc {

/// The CUDA target: CUDA C++ that nvcc builds, cuBLASLt for GEMMs
/// (CudaTarget.cpp).
const codegen::Target &cudaTarget();

/// The ops the CUDA target runs, for `dynoc list-backends` and the docs.
std::vector<std::string> cudaSupportedOps();

/// The text of the CUDA kernel library the generated source includes.
const char *cudaKernelPrelude();

/// What a --target=cuda build compiles against, where the build looks for
/// it and whether it is there (`dynoc doctor`).
struct CudaBuildDependency {
  std::string name;   // "nvcc", "cuBLASLt", ...
  std::string where;  // the program or folder looked at ("" if none)
  bool found = false;
  bool required = true; // false: the build works without it, slower
  std::string hint;     // how to get it
};
std::vector<CudaBuildDependency> cudaBuildDependencies();

/// Builds `module` into a CUDA model .so with nvcc (found as $NVCC, on the
/// PATH, or under $CUDA_HOME / /usr/local/cuda); cuBLASLt's headers and
/// library come from $DYNOC_CUBLAS_HOME (bootstrap installs the nvidia-cublas
/// wheel there). Needs no GPU.
mlir::LogicalResult buildCudaModel(mlir::ModuleOp module,
                                   const codegen::BuildOptions &options);

} // namespace dynoc

#endif // DYNOC_CODEGENCUDA_CUDACODEGEN_H
