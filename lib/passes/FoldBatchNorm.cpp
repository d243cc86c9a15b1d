//===- FoldBatchNorm.cpp - eval batch norm into the convolution before it -===//
//
// batch_norm(conv(x, W, b)) in eval mode is conv(x, W * s, (b - mean) * s +
// beta) with s = gamma / sqrt(var + eps) per output channel. The rewrite
// leaves the new weight and bias as ops on the weights (O(weights) work)
// instead of a pass over the activations.
//
//===----------------------------------------------------------------------===//
#include "dynoc/IR/AtenDialect.h"
#include "dynoc/Passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace dynoc {
#define GEN_PASS_DEF_FOLDBATCHNORM
#include "dynoc/Passes/Passes.h.inc"
} // namespace dynoc

using namespace mlir;
using namespace dynoc::aten;

namespace {

/// Builds the aten op `name` with one result of `type`.
Value build(PatternRewriter &rewriter, Location loc, StringRef name, Type type,
            ValueRange operands, ArrayRef<NamedAttribute> attrs = {}) {
  OperationState state(loc, name);
  state.addOperands(operands);
  state.addTypes(type);
  state.addAttributes(attrs);
  return rewriter.create(state)->getResult(0);
}

/// Folds one eval-mode batch norm (native_batch_norm with training = false,
/// or _native_batch_norm_legit_no_training) into the convolution it reads.
struct FoldIntoConvolution : RewritePattern {
  FoldIntoConvolution(MLIRContext *ctx)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/1, ctx) {}

  LogicalResult matchAndRewrite(Operation *bn,
                                PatternRewriter &rewriter) const override {
    bool eval = false;
    if (auto op = dyn_cast<AtenNativeBatchNormOp>(bn))
      eval = !op.getTraining();
    else
      eval = isa<NativeBatchNormLegitNoTrainingOp>(bn);
    // input, weight, bias, running_mean, running_var: all present.
    if (!eval || bn->getNumOperands() != 5)
      return rewriter.notifyMatchFailure(bn, "not an affine eval batch norm");
    if (!bn->getResult(1).use_empty() || !bn->getResult(2).use_empty())
      return rewriter.notifyMatchFailure(bn, "its statistics are used");
    auto conv = bn->getOperand(0).getDefiningOp<AtenConvolutionOp>();
    if (!conv || conv.getTransposed() || !bn->getOperand(0).hasOneUse())
      return rewriter.notifyMatchFailure(bn, "not fed by a lone convolution");
    auto epsAttr = bn->getAttrOfType<FloatAttr>("eps");
    Value weight = conv->getOperand(1);
    auto wType = weight.getType().dyn_cast<RankedTensorType>();
    auto vecType = bn->getOperand(1).getType().dyn_cast<RankedTensorType>();
    if (!epsAttr || !wType || !vecType || !wType.getElementType().isF32() ||
        vecType.getRank() != 1 || wType.isDynamicDim(0) ||
        vecType.getDimSize(0) != wType.getDimSize(0))
      return rewriter.notifyMatchFailure(bn, "channel counts do not agree");

    Location loc = bn->getLoc();
    Value gamma = bn->getOperand(1), beta = bn->getOperand(2),
          mean = bn->getOperand(3), var = bn->getOperand(4);
    rewriter.setInsertionPoint(conv);
    // s = gamma * rsqrt(var + eps)
    Value varEps = build(rewriter, loc, "aten.add.Scalar", vecType, var,
                         {rewriter.getNamedAttr("other", epsAttr)});
    Value inv = build(rewriter, loc, "aten.rsqrt", vecType, varEps);
    Value scale =
        build(rewriter, loc, "aten.mul.Tensor", vecType, {gamma, inv});
    // W' = W * s, s viewed as [C, 1, ..., 1]
    SmallVector<int64_t> column(wType.getRank(), 1);
    column[0] = wType.getDimSize(0);
    Value scaleColumn = build(
        rewriter, loc, "aten.view",
        RankedTensorType::get(column, vecType.getElementType()), scale,
        {rewriter.getNamedAttr("size", rewriter.getDenseI64ArrayAttr(column))});
    Value newWeight =
        build(rewriter, loc, "aten.mul.Tensor", wType, {weight, scaleColumn});
    // b' = (b - mean) * s + beta, or beta - mean * s without a bias
    Value newBias;
    if (conv->getNumOperands() == 3) {
      Value centered = build(rewriter, loc, "aten.sub.Tensor", vecType,
                             {conv->getOperand(2), mean});
      Value scaled =
          build(rewriter, loc, "aten.mul.Tensor", vecType, {centered, scale});
      newBias =
          build(rewriter, loc, "aten.add.Tensor", vecType, {scaled, beta});
    } else {
      Value scaledMean =
          build(rewriter, loc, "aten.mul.Tensor", vecType, {mean, scale});
      newBias =
          build(rewriter, loc, "aten.sub.Tensor", vecType, {beta, scaledMean});
    }
    OperationState state(conv->getLoc(), conv->getName());
    state.addOperands({conv->getOperand(0), newWeight, newBias});
    state.addTypes(bn->getResult(0).getType());
    state.addAttributes(conv->getAttrs());
    Operation *folded = rewriter.create(state);
    rewriter.replaceAllUsesWith(bn->getResult(0), folded->getResult(0));
    rewriter.eraseOp(bn);
    rewriter.eraseOp(conv);
    return success();
  }
};

struct FoldBatchNormPass : dynoc::impl::FoldBatchNormBase<FoldBatchNormPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FoldIntoConvolution>(&getContext());
    if (failed(dynoc::applyPatternsOrReport(getOperation(), std::move(patterns),
                                            "dynoc-fold-batchnorm")))
      signalPassFailure();
  }
};
} // namespace

std::unique_ptr<Pass> dynoc::createFoldBatchNormPass() {
  return std::make_unique<FoldBatchNormPass>();
}
