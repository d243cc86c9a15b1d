//===- Passes.h - passes `dynoc opt` and `dynoc build` can run --*- C++ -*-===//
#ifndef DYNOC_PASSES_PASSES_H
#define DYNOC_PASSES_PASSES_H

#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/Pass.h"

#include <memory>

namespace dynoc {
std::unique_ptr<mlir::Pass> createBucketAllReducesPass();
/// Buckets of `capMb` MiB (the first one `firstCapMb`).
std::unique_ptr<mlir::Pass> createBucketAllReducesPass(double capMb,
                                                       double firstCapMb);
std::unique_ptr<mlir::Pass> createCanonicalizePass();
std::unique_ptr<mlir::Pass> createDeferWaitsPass();
std::unique_ptr<mlir::Pass> createDecomposePass();
/// dynoc-decompose, also decomposing the attention backward where
/// `attentionBackward` (the target has no kernel for it) and f32 attention
/// where `attentionF32` (the target's f32 kernel is slow).
std::unique_ptr<mlir::Pass> createDecomposePass(bool attentionBackward,
                                                bool attentionF32);
/// The attention backward as GEMMs and a softmax
/// (AttentionDecompositions.cpp), for targets without its kernel.
void populateAttentionBackwardDecomposition(mlir::RewritePatternSet &patterns);
/// f32/f64 attention (its log-sum-exp unread) as GEMMs and a softmax
/// (AttentionDecompositions.cpp), for targets whose f32 kernel is slow.
void populateAttentionF32Decomposition(mlir::RewritePatternSet &patterns);
/// The backward-pass kernels' decompositions (BackwardDecompositions.cpp),
/// part of dynoc-decompose.
void populateBackwardDecompositions(mlir::RewritePatternSet &patterns);
/// Composite pointwise ops (addcmul, addcdiv, lerp, rsub) as core
/// elementwise ops in ATen's order of operations
/// (PointwiseDecompositions.cpp), applied by dynoc-decompose.
void populatePointwiseDecompositions(mlir::RewritePatternSet &patterns);
/// var.correction and batch norm's training forward and backward as
/// reductions and elementwise ops (StatisticsDecompositions.cpp), applied by
/// dynoc-decompose.
void populateStatisticsDecompositions(mlir::RewritePatternSet &patterns);
/// 1-D convolutions as 2-D ones over a height of one
/// (ConvolutionDecompositions.cpp).
void populateConvolutionDecompositions(mlir::RewritePatternSet &patterns);
/// baddbmm as bmm and elementwise ops (MatmulDecompositions.cpp).
void populateMatmulDecompositions(mlir::RewritePatternSet &patterns);
/// index_select of matrix rows as embedding, split_with_sizes as slices
/// (DataMovementDecompositions.cpp).
void populateDataMovementDecompositions(mlir::RewritePatternSet &patterns);
std::unique_ptr<mlir::Pass> createFoldBatchNormPass();
std::unique_ptr<mlir::Pass> createFusionPass();
std::unique_ptr<mlir::Pass> createInferShapesPass();
std::unique_ptr<mlir::Pass> createPrecomputeWeightsPass();
std::unique_ptr<mlir::Pass> createWidenReducedPrecisionPass();
/// The widening that leaves `keepOps` (ops a target computes in bf16/f16
/// itself) alone.
std::unique_ptr<mlir::Pass>
createWidenReducedPrecisionPass(llvm::ArrayRef<std::string> keepOps);

/// Applies `patterns` greedily to `op` until nothing changes, as MLIR's
/// driver does; when they keep changing the graph past the driver's limit
/// (a loop between patterns, say on an op whose types contradict it), an
/// error at `op` names `pass`, rather than a silent failure.
mlir::LogicalResult applyPatternsOrReport(mlir::Operation *op,
                                          mlir::RewritePatternSet &&patterns,
                                          llvm::StringRef pass);

/// Whether the graph reads a result of `op` that `mask` (a backward op's
/// output_mask) says is not computed: ATen gives an undefined tensor there,
/// so the graph is malformed and decompositions leave the op for its error.
bool usesMaskedResult(mlir::Operation *op, llvm::ArrayRef<bool> mask);

/// aten._to_copy(v) {dtype = element}: `v`'s elements converted to `element`
/// (the conversion dynoc-widen-reduced-precision writes around an op).
mlir::Value convertElementType(mlir::OpBuilder &b, mlir::Location loc,
                               mlir::Value v, mlir::Type element);

#define GEN_PASS_DECL
#include "dynoc/Passes/Passes.h.inc"

/// Registers every pass `dynoc opt --pass=` accepts: dynoc's own (see
/// Passes.td) and MLIR's generic cleanups (canonicalize, cse, symbol-dce, ...).
void registerPasses();
} // namespace dynoc

#endif // DYNOC_PASSES_PASSES_H
