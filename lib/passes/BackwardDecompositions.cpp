//===- BackwardDecompositions.cpp - autograd's backward ops -> core ops ---===//
//
// The gradient kernels the autograd engine calls in a backward pass
// (docs/training.md) as the elementwise ops both backends already emit, so a
// recorded backward graph builds wherever its forward does. These need result
// types other than their operands' (a comparison's i1 mask) or constants
// computed from a type (mse_loss's 2/N), which the declarative table in
// Decompositions.td cannot express.
//
//===----------------------------------------------------------------------===//
#include "dynoc/IR/AtenDialect.h"
#include "dynoc/Passes/Passes.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace dynoc::aten;

namespace {
Attribute f64(PatternRewriter &rewriter, double v) {
  return rewriter.getF64FloatAttr(v);
}

/// 1 - x, as x * -1 + 1 (ops the elementwise emitters fuse).
Value oneMinus(PatternRewriter &rewriter, Location loc, Value x) {
  Value neg = rewriter.create<AtenNegOp>(loc, x.getType(), x);
  return rewriter.create<AtenAddScalarOp>(loc, x.getType(), neg,
                                          f64(rewriter, 1.0), Attribute());
}

/// threshold_backward(g, x, t) = g where x > t, else 0: g * (x > t).
struct ThresholdBackward : OpRewritePattern<AtenThresholdBackwardOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AtenThresholdBackwardOp op,
                                PatternRewriter &rewriter) const override {
    auto type = op.getSelf().getType().cast<RankedTensorType>();
    auto maskType =
        RankedTensorType::get(type.getShape(), rewriter.getI1Type());
    Value mask = rewriter.create<AtenGtScalarOp>(
        op.getLoc(), maskType, op.getSelf(), op.getThreshold());
    rewriter.replaceOpWithNewOp<AtenMulTensorOp>(op, op.getType(),
                                                 op.getGradOutput(), mask);
    return success();
  }
};

/// sigmoid_backward(g, y) = g * y * (1 - y).
struct SigmoidBackward : OpRewritePattern<AtenSigmoidBackwardOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AtenSigmoidBackwardOp op,
                                PatternRewriter &rewriter) const override {
    Value y = op.getOutput();
    Value dy = rewriter.create<AtenMulTensorOp>(
        op.getLoc(), y.getType(), y, oneMinus(rewriter, op.getLoc(), y));
    rewriter.replaceOpWithNewOp<AtenMulTensorOp>(op, op.getType(),
                                                 op.getGradOutput(), dy);
    return success();
  }
};

/// tanh_backward(g, y) = g * (1 - y * y).
struct TanhBackward : OpRewritePattern<AtenTanhBackwardOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AtenTanhBackwardOp op,
                                PatternRewriter &rewriter) const override {
    Value y = op.getOutput();
    Value y2 = rewriter.create<AtenMulTensorOp>(op.getLoc(), y.getType(), y, y);
    rewriter.replaceOpWithNewOp<AtenMulTensorOp>(
        op, op.getType(), op.getGradOutput(),
        oneMinus(rewriter, op.getLoc(), y2));
    return success();
  }
};

/// mse_loss_backward(g, x, t, reduction) = g * (x - t) * 2 (/ N for mean),
/// N the element count of x (static shapes only).
struct MseLossBackward : OpRewritePattern<AtenMseLossBackwardOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AtenMseLossBackwardOp op,
                                PatternRewriter &rewriter) const override {
    auto type = op.getSelf().getType().cast<RankedTensorType>();
    int64_t reduction = op.getReduction();
    if (reduction < 0 || reduction > 2)
      return rewriter.notifyMatchFailure(op, "unknown reduction");
    if (reduction == 1 && !type.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "mean over a dynamic shape");
    double scale = reduction == 1 ? 2.0 / double(type.getNumElements()) : 2.0;
    Location loc = op.getLoc();
    Value diff = rewriter.create<AtenSubTensorOp>(
        loc, op.getType(), op.getSelf(), op.getTarget(), Attribute());
    Value scaled = rewriter.create<AtenMulScalarOp>(loc, op.getType(), diff,
                                                    f64(rewriter, scale));
    rewriter.replaceOpWithNewOp<AtenMulTensorOp>(op, op.getType(), scaled,
                                                 op.getGradOutput());
    return success();
  }
};
} // namespace

void dynoc::populateBackwardDecompositions(RewritePatternSet &patterns) {
  patterns
      .add<ThresholdBackward, SigmoidBackward, TanhBackward, MseLossBackward>(
          patterns.getContext());
}
