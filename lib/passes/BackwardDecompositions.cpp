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
/// sum(x, dim, keepdim=True), the shape of x with dim as 1.
Value sumKeepDim(PatternRewriter &rewriter, Location loc, Value x,
                 int64_t dim) {
  auto type = x.getType().cast<RankedTensorType>();
  SmallVector<int64_t> shape(type.getShape());
  if (dim < 0)
    dim += type.getRank();
  shape[dim] = 1;
  return rewriter.create<AtenSumDimIntListOp>(
      loc, RankedTensorType::get(shape, type.getElementType()), x,
      rewriter.getDenseI64ArrayAttr({dim}), rewriter.getBoolAttr(true),
      TypeAttr());
}

/// _softmax_backward_data(g, y, dim) = y * (g - sum(g * y, dim)).
struct SoftmaxBackward : OpRewritePattern<SoftmaxBackwardDataOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SoftmaxBackwardDataOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value g = op.getGradOutput(), y = op.getOutput();
    if (g.getType() != op.getType() || y.getType() != op.getType())
      return rewriter.notifyMatchFailure(op, "mixed dtypes");
    Value gy = rewriter.create<AtenMulTensorOp>(loc, op.getType(), g, y);
    Value s = sumKeepDim(rewriter, loc, gy, op.getDim());
    Value d =
        rewriter.create<AtenSubTensorOp>(loc, op.getType(), g, s, Attribute());
    rewriter.replaceOpWithNewOp<AtenMulTensorOp>(op, op.getType(), y, d);
    return success();
  }
};

/// _log_softmax_backward_data(g, y, dim) = g - exp(y) * sum(g, dim).
struct LogSoftmaxBackward : OpRewritePattern<LogSoftmaxBackwardDataOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(LogSoftmaxBackwardDataOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value g = op.getGradOutput(), y = op.getOutput();
    if (g.getType() != op.getType() || y.getType() != op.getType())
      return rewriter.notifyMatchFailure(op, "mixed dtypes");
    Value s = sumKeepDim(rewriter, loc, g, op.getDim());
    Value e = rewriter.create<AtenExpOp>(loc, op.getType(), y);
    Value es = rewriter.create<AtenMulTensorOp>(loc, op.getType(), e, s);
    rewriter.replaceOpWithNewOp<AtenSubTensorOp>(op, op.getType(), g, es,
                                                 Attribute());
    return success();
  }
};

/// nll_loss_backward(g, x[N, C], t[N], weight=None, reduction, ignore_index,
/// total_weight): -g at (i, t_i) for each row whose target is not
/// ignore_index (divided by total_weight for the mean), 0 elsewhere:
/// -(t_i == arange(C)) * (t_i != ignore_index) * g [/ total_weight].
struct NllLossBackward : OpRewritePattern<AtenNllLossBackwardOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AtenNllLossBackwardOp op,
                                PatternRewriter &rewriter) const override {
    auto type = op.getSelf().getType().cast<RankedTensorType>();
    auto target = op.getTarget().getType().cast<RankedTensorType>();
    if (op.getWeight())
      return rewriter.notifyMatchFailure(op, "class weights");
    if (type.getRank() != 2 || target.getRank() != 1 || !type.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "not a static (N, C) input");
    int64_t reduction = op.getReduction();
    if (reduction < 0 || reduction > 2)
      return rewriter.notifyMatchFailure(op, "unknown reduction");
    Location loc = op.getLoc();
    int64_t n = type.getDimSize(0), c = type.getDimSize(1);
    Type i1 = rewriter.getI1Type(), i64 = target.getElementType();
    Value classes = rewriter.create<AtenArangeOp>(
        loc, RankedTensorType::get({c}, i64), rewriter.getI64IntegerAttr(c),
        TypeAttr::get(i64), StringAttr(), StringAttr(), BoolAttr());
    Value column = rewriter.create<AtenUnsqueezeOp>(
        loc, RankedTensorType::get({n, 1}, i64), op.getTarget(),
        rewriter.getI64IntegerAttr(1));
    Value hit = rewriter.create<AtenEqTensorOp>(
        loc, RankedTensorType::get({n, c}, i1), column, classes);
    Value kept = rewriter.create<AtenNeScalarOp>(
        loc, RankedTensorType::get({n, 1}, i1), column,
        rewriter.getI64IntegerAttr(op.getIgnoreIndex()));
    Value mask = rewriter.create<AtenMulTensorOp>(
        loc, RankedTensorType::get({n, c}, i1), hit, kept);
    Value g = op.getGradOutput();
    auto gType = g.getType().cast<RankedTensorType>();
    if (reduction == 0) // one gradient per row
      g = rewriter.create<AtenUnsqueezeOp>(
          loc, RankedTensorType::get({n, 1}, gType.getElementType()), g,
          rewriter.getI64IntegerAttr(1));
    else if (reduction == 1)
      g = rewriter.create<AtenDivTensorOp>(loc, gType, g, op.getTotalWeight());
    Value neg = rewriter.create<AtenNegOp>(loc, g.getType(), g);
    rewriter.replaceOpWithNewOp<AtenMulTensorOp>(op, op.getType(), mask, neg);
    return success();
  }
};
} // namespace

void dynoc::populateBackwardDecompositions(RewritePatternSet &patterns) {
  patterns
      .add<ThresholdBackward, SigmoidBackward, TanhBackward, MseLossBackward,
           SoftmaxBackward, LogSoftmaxBackward, NllLossBackward>(
          patterns.getContext());
}
