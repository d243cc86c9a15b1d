//===- ModuleEmitter.h - graph module -> source + manifest ------*- C++ -*-===//
//
// What both targets' builds call: the graph passes `dynoc build` runs, and
// the printing of a whole graph module (every graph's functions, the embedded
// manifest) for a Target.
//
//===----------------------------------------------------------------------===//
#ifndef DYNOC_CODEGEN_MODULEEMITTER_H
#define DYNOC_CODEGEN_MODULEEMITTER_H

#include "dynoc/Codegen/Target.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LogicalResult.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace dynoc {
namespace codegen {

/// The generated source of a graph module and the manifest it embeds.
struct ModuleSource {
  std::string source;
  /// The manifest, until finishModuleSource embeds it as `manifestJson`.
  nlohmann::json manifest;
  std::string manifestJson;
  /// Non-user inputs (weights) the graphs read, by name.
  std::vector<std::string> weightNames;
  /// Per graph, the bytes of its intermediates after buffer reuse (the
  /// workspace a run needs), or -1 when that depends on dynamic dims.
  std::vector<int64_t> workspaceBytes;
  /// Per graph: ops the memory plan runs in place.
  std::vector<unsigned> inPlaceOps;
  /// Distinct kernels printed at file scope (KernelDefinitions.h).
  size_t kernelDefinitions = 0;
};

/// Prints every func of `module` for `target`. `weightsFile` is the sidecar's
/// file name recorded in the manifest, unless `embedWeights` says the weights
/// are linked into the .so. Ops, dtypes or attributes the target does not
/// support are errors attached to their location.
/// `build` is the manifest's "build" record (Toolchain::buildRecord).
/// The manifest is left in `out.manifest` for the build to complete (the
/// weights' digest is known once they are written); finishModuleSource
/// embeds it.
mlir::LogicalResult emitModule(mlir::ModuleOp module, const Target &target,
                               const std::string &weightsFile,
                               bool embedWeights, const nlohmann::json &build,
                               ModuleSource &out);

/// Embeds `out.manifest` in `out.source` (dynoc_model_manifest) with the
/// target's ABI version.
void finishModuleSource(const Target &target, ModuleSource &out);

/// Runs the graph passes `dynoc build` applies at `optLevel` (shape inference
/// and reduced-precision widening always; decomposition and fusion from -O1)
/// on `module`. The ops `target` computes in bf16/f16 itself are not widened.
/// From -O1 a graph's all-reduces merge into buckets of `bucketCapMb` MiB
/// (0: none) and collectives' waits move to their results' first use.
mlir::LogicalResult runBuildPasses(mlir::ModuleOp module, int optLevel,
                                   const Target &target,
                                   double bucketCapMb = 25.0);

} // namespace codegen
} // namespace dynoc

#endif // DYNOC_CODEGEN_MODULEEMITTER_H
