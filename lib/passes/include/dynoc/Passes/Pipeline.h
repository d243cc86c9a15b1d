//===- Pipeline.h - the pass pipeline `dynoc build` runs --------*- C++ -*-===//
//
// The order of the graph passes a build applies, next to the passes (as
// IREE's LLVMCPU/Passes.cpp): the code generators call buildGraphPipeline,
// and `dynoc opt --dynoc-build-pipeline` runs the same list by hand.
//
//===----------------------------------------------------------------------===//
#ifndef DYNOC_PASSES_PIPELINE_H
#define DYNOC_PASSES_PIPELINE_H

#include "mlir/Pass/PassManager.h"

#include <string>
#include <vector>

namespace dynoc {

struct GraphPipelineOptions {
  /// dynoc build's -O level: shape inference and reduced-precision widening
  /// always; decomposition, canonicalization, folding and fusion from -O1.
  int optLevel = 2;
  /// Ops the target computes in bf16/f16 itself (not widened to f32).
  std::vector<std::string> reducedPrecisionOps;
  /// From -O1 a graph's all-reduces merge into buckets of this many MiB
  /// (0: none) and collectives' waits move to their results' first use.
  double bucketCapMb = 25.0;
  /// The target has no attention backward kernel: dynoc-decompose writes it
  /// as GEMMs and a softmax (Target::attentionBackward).
  bool decomposeAttentionBackward = false;
  /// Its f32 attention kernel is slow: f32/f64 attention as GEMMs and a
  /// softmax (Target::fastAttentionF32).
  bool decomposeAttentionF32 = false;
};

/// Adds the build's graph passes to `pm` (a pass manager on the module).
void buildGraphPipeline(mlir::OpPassManager &pm,
                        const GraphPipelineOptions &options);

/// Registers `dynoc-build-pipeline` (options opt-level, keep-reduced,
/// bucket-cap-mb) for dynoc opt.
void registerGraphPipeline();

} // namespace dynoc

#endif // DYNOC_PASSES_PIPELINE_H
