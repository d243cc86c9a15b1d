//===- Decompose.cpp - composite aten ops -> core ops ---------------------===//
//
// The rules are the table in Decompositions.td; this file only applies them.
//
//===----------------------------------------------------------------------===//
#include "dynoc/IR/AtenDialect.h"
#include "dynoc/Passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace dynoc {
#define GEN_PASS_DEF_DECOMPOSE
#include "dynoc/Passes/Passes.h.inc"
} // namespace dynoc

using namespace mlir;
using namespace dynoc::aten;

namespace {
#include "lib/passes/Decompositions.inc"

struct DecomposePass : dynoc::impl::DecomposeBase<DecomposePass> {
  using DecomposeBase::DecomposeBase;
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateWithGenerated(patterns);
    dynoc::populateBackwardDecompositions(patterns);
    if (attentionBackward)
      dynoc::populateAttentionBackwardDecomposition(patterns);
    if (attentionF32)
      dynoc::populateAttentionF32Decomposition(patterns);
    dynoc::populatePointwiseDecompositions(patterns);
    dynoc::populateStatisticsDecompositions(patterns);
    dynoc::populateConvolutionDecompositions(patterns);
    dynoc::populateMatmulDecompositions(patterns);
    dynoc::populateDataMovementDecompositions(patterns);
    if (failed(dynoc::applyPatternsOrReport(getOperation(), std::move(patterns),
                                            "dynoc-decompose")))
      signalPassFailure();
  }
};
} // namespace

std::unique_ptr<Pass> dynoc::createDecomposePass() {
  return std::make_unique<DecomposePass>();
}

std::unique_ptr<Pass> dynoc::createDecomposePass(bool attentionBackward,
                                                 bool attentionF32) {
  dynoc::DecomposeOptions options;
  options.attentionBackward = attentionBackward;
  options.attentionF32 = attentionF32;
  return std::make_unique<DecomposePass>(options);
}
