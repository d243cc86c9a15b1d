//===- Pipeline.cpp - the pass pipeline `dynoc build` runs ----------------===//
#include "dynoc/Passes/Pipeline.h"
#include "dynoc/Passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassOptions.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

#include <algorithm>

using namespace mlir;

void dynoc::buildGraphPipeline(OpPassManager &pm,
                               const GraphPipelineOptions &options) {
  {
    auto &graph = pm.nest<func::FuncOp>();
    // First, at every level: a type that contradicts its op is an error here,
    // at the op, rather than a wrong kernel; `?` dims the operands fix become
    // static before anything reads them.
    graph.addPass(createInferShapesPass());
    // A legalization, not an optimization: the code generator computes in f32
    // (bar the target's reduced-precision ops), so bf16/f16 graphs need it at
    // every level. It runs before the decompositions so that a composite op
    // (add with alpha, silu) still rounds its result once.
    graph.addPass(createWidenReducedPrecisionPass(options.reducedPrecisionOps));
    if (options.optLevel >= 1) {
      graph.addPass(createDecomposePass(options.decomposeAttentionBackward,
                                        options.decomposeAttentionF32));
      graph.addPass(createCanonicalizePass());
      graph.addPass(createFoldBatchNormPass());
      // A bf16 fold leaves bf16 -> f32 -> bf16 round trips behind.
      graph.addPass(createCanonicalizePass());
      graph.addPass(createCSEPass());
      // DDP's gradient all-reduces: a few buckets, each in flight while the
      // backward pass goes on (docs/distributed.md).
      if (options.bucketCapMb > 0)
        graph.addPass(createBucketAllReducesPass(
            options.bucketCapMb, std::min(options.bucketCapMb, 1.0)));
      graph.addPass(createDeferWaitsPass());
    }
  }
  if (options.optLevel >= 1) {
    // The folded batch norm's weight and bias (and any other op on weights
    // alone) are computed once, at load, rather than per call.
    pm.addPass(createPrecomputeWeightsPass());
    pm.nest<func::FuncOp>().addPass(createFusionPass());
  }
}

namespace {
struct GraphPipelineCliOptions
    : public PassPipelineOptions<GraphPipelineCliOptions> {
  Option<int> optLevel{*this, "opt-level",
                       llvm::cl::desc("dynoc build's -O level (0-3)"),
                       llvm::cl::init(2)};
  ListOption<std::string> keepReduced{
      *this, "keep-reduced",
      llvm::cl::desc("ops the target computes in bf16/f16 itself (the CUDA "
                     "target's list: dynoc build --target=cuda)")};
  Option<double> bucketCapMb{
      *this, "bucket-cap-mb",
      llvm::cl::desc("all-reduce bucket size in MiB (0: no buckets)"),
      llvm::cl::init(25.0)};
  Option<bool> decomposeAttentionBackward{
      *this, "decompose-attention-backward",
      llvm::cl::desc("the target has no attention backward kernel (CUDA)"),
      llvm::cl::init(false)};
  Option<bool> decomposeAttentionF32{
      *this, "decompose-attention-f32",
      llvm::cl::desc("the target's f32 attention kernel is slow (CUDA)"),
      llvm::cl::init(false)};
};
} // namespace

void dynoc::registerGraphPipeline() {
  // As PassPipelineRegistration, plus a check: the pipeline nests its own
  // func passes and runs module passes, so it must be added to the module's
  // pass manager (mlir's fatal error otherwise).
  registerPassPipeline(
      "dynoc-build-pipeline",
      "The graph passes dynoc build runs, in its order (per -O level)",
      [](OpPassManager &pm, StringRef text,
         function_ref<LogicalResult(const Twine &)> errorHandler) {
        if (pm.getOpAnchorName() != ModuleOp::getOperationName())
          return errorHandler("dynoc-build-pipeline runs on the module, not "
                              "nested in '" +
                              pm.getOpAnchorName() + "'");
        GraphPipelineCliOptions cli;
        if (failed(cli.parseFromString(text)))
          return failure();
        GraphPipelineOptions options;
        options.optLevel = cli.optLevel;
        options.reducedPrecisionOps.assign(cli.keepReduced.begin(),
                                           cli.keepReduced.end());
        options.bucketCapMb = cli.bucketCapMb;
        options.decomposeAttentionBackward = cli.decomposeAttentionBackward;
        options.decomposeAttentionF32 = cli.decomposeAttentionF32;
        buildGraphPipeline(pm, options);
        return success();
      },
      [](function_ref<void(const detail::PassOptions &)> optHandler) {
        optHandler(GraphPipelineCliOptions());
      });
}
