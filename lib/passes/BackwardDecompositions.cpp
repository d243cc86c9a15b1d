//===- BackwardDecompositions.cpp - autograd's backward ops -> core ops ---===//
//
// The gradient kernels the autograd engine calls in a backward pass
// (docs/training.md) as the elementwise ops both backends already emit, so a
// recorded backward graph builds wherever its forward does. These need result
// types other than their operands' (a comparison's i1 mask) or constants
// computed from a type (mse_loss's 2/N), which the declarative table in
// Decompositions.td cannot express. Also the losses whose backward is here
// (binary cross-entropy, smooth L1, Huber).
//
//===----------------------------------------------------------------------===//
#include "dynoc/IR/AtenDialect.h"
#include "dynoc/Passes/Passes.h"
#include "SharedDecompositions.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/PatternMatch.h"

#include <cmath>

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
/// Whether `dim` (negative: from the end) is a dim of x. dynoc-infer-shapes
/// names the error; patterns check it too, since this pass may run alone.
bool isDimOf(Value x, int64_t dim) {
  int64_t rank = x.getType().cast<RankedTensorType>().getRank();
  return dim >= -rank && dim < rank;
}

/// sum(x, dim, keepdim=True), the shape of x with dim as 1 (isDimOf(x, dim)).
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
    if (!isDimOf(g, op.getDim()))
      return rewriter.notifyMatchFailure(op, "dim out of range");
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
    if (!isDimOf(g, op.getDim()))
      return rewriter.notifyMatchFailure(op, "dim out of range");
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
/// A scalar multiple: x * c in x's type.
Value scale(PatternRewriter &rewriter, Location loc, Value x, double c) {
  return rewriter.create<AtenMulScalarOp>(loc, x.getType(), x,
                                          f64(rewriter, c));
}

Value mul(PatternRewriter &rewriter, Location loc, Value a, Value b) {
  return rewriter.create<AtenMulTensorOp>(loc, a.getType(), a, b);
}

Value add(PatternRewriter &rewriter, Location loc, Value a, Value b) {
  return rewriter.create<AtenAddTensorOp>(loc, a.getType(), a, b, Attribute());
}

/// silu_backward(g, x) = g * s * (1 + x * (1 - s)) with s = sigmoid(x), in
/// ATen's order of operations (a Llama MLP's gate).
struct SiluBackward : OpRewritePattern<AtenSiluBackwardOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AtenSiluBackwardOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = op.getSelf();
    Value s = rewriter.create<AtenSigmoidOp>(loc, x.getType(), x);
    Value inner = rewriter.create<AtenAddScalarOp>(
        loc, x.getType(), mul(rewriter, loc, x, oneMinus(rewriter, loc, s)),
        f64(rewriter, 1.0), Attribute());
    Value gs = mul(rewriter, loc, op.getGradOutput(), s);
    rewriter.replaceOp(op, mul(rewriter, loc, gs, inner));
    return success();
  }
};

/// gelu_backward(g, x): g * (cdf(x) + x * pdf(x)) for the exact GELU, and the
/// derivative of 0.5 x (1 + tanh(k (x + 0.044715 x^3))) for the tanh one, in
/// ATen's order of operations.
struct GeluBackward : OpRewritePattern<AtenGeluBackwardOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AtenGeluBackwardOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = op.getSelf();
    std::optional<StringRef> approx = op.getApproximate();
    Value d;
    if (!approx || *approx == "none") {
      const double kAlpha = M_SQRT1_2, kBeta = M_2_SQRTPI * M_SQRT1_2 * 0.5;
      Value e = rewriter.create<AtenErfOp>(loc, x.getType(),
                                           scale(rewriter, loc, x, kAlpha));
      Value cdf =
          scale(rewriter, loc,
                rewriter.create<AtenAddScalarOp>(
                    loc, x.getType(), e, f64(rewriter, 1.0), Attribute()),
                0.5);
      Value pdf =
          scale(rewriter, loc,
                rewriter.create<AtenExpOp>(
                    loc, x.getType(),
                    scale(rewriter, loc, mul(rewriter, loc, x, x), -0.5)),
                kBeta);
      d = add(rewriter, loc, cdf, mul(rewriter, loc, x, pdf));
    } else if (*approx == "tanh") {
      const double kBeta = M_SQRT2 * M_2_SQRTPI * 0.5, kKappa = 0.044715;
      Value x2 = mul(rewriter, loc, x, x);
      Value x3 = mul(rewriter, loc, x2, x);
      Value inner =
          scale(rewriter, loc,
                add(rewriter, loc, x, scale(rewriter, loc, x3, kKappa)), kBeta);
      Value t = rewriter.create<AtenTanhOp>(loc, x.getType(), inner);
      Value left = scale(rewriter, loc, x, 0.5);
      Value right = rewriter.create<AtenAddScalarOp>(
          loc, x.getType(), t, f64(rewriter, 1.0), Attribute());
      Value leftDerivative = scale(rewriter, loc, right, 0.5);
      Value tanhDerivative = oneMinus(rewriter, loc, mul(rewriter, loc, t, t));
      Value innerDerivative =
          scale(rewriter, loc,
                rewriter.create<AtenAddScalarOp>(
                    loc, x.getType(), scale(rewriter, loc, x2, 3 * kKappa),
                    f64(rewriter, 1.0), Attribute()),
                kBeta);
      Value rightDerivative =
          mul(rewriter, loc, mul(rewriter, loc, left, tanhDerivative),
              innerDerivative);
      d = add(rewriter, loc, leftDerivative, rightDerivative);
    } else {
      return rewriter.notifyMatchFailure(op, "unknown approximation");
    }
    rewriter.replaceOpWithNewOp<AtenMulTensorOp>(op, op.getType(),
                                                 op.getGradOutput(), d);
    return success();
  }
};

/// native_layer_norm_backward(dy, x, normalized_shape, mean, rstd, w, b):
/// with x^ = (x - mean) * rstd and g = dy * w over the normalized (last k)
/// dims, dx = rstd * (g - mean(g) - x^ * mean(g * x^)), dw = sum(dy * x^) and
/// db = sum(dy) over the leading dims. Results the mask leaves out (or that
/// nothing reads) are not computed.
struct LayerNormBackward : OpRewritePattern<AtenNativeLayerNormBackwardOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AtenNativeLayerNormBackwardOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = op.getInput(), dy = op.getGradOut();
    auto type = x.getType().cast<RankedTensorType>();
    auto rowType = op.getMean().getType().cast<RankedTensorType>();
    int64_t rank = type.getRank(), k = int64_t(op.getNormalizedShape().size());
    if (k == 0 || k > rank || rowType.getRank() != rank ||
        rowType.getElementType() != type.getElementType())
      return rewriter.notifyMatchFailure(op, "unexpected statistics shape");
    if (dynoc::usesMaskedResult(op, op.getOutputMask()))
      return rewriter.notifyMatchFailure(op, "a result the mask leaves out "
                                             "is used");
    SmallVector<int64_t> normDims, leadDims;
    for (int64_t d = 0; d < rank; ++d)
      (d >= rank - k ? normDims : leadDims).push_back(d);
    auto keep = rewriter.getBoolAttr(true);
    auto rowMean = [&](Value v) -> Value {
      return rewriter.create<AtenMeanDimOp>(
          loc, rowType, v, rewriter.getDenseI64ArrayAttr(normDims), keep,
          TypeAttr());
    };
    auto leadSum = [&](Value v, Type t) -> Value {
      if (leadDims.empty())
        return v;
      return rewriter.create<AtenSumDimIntListOp>(
          loc, t, v, rewriter.getDenseI64ArrayAttr(leadDims),
          rewriter.getBoolAttr(false), TypeAttr());
    };
    ArrayRef<bool> mask = op.getOutputMask();
    auto wanted = [&](unsigned i) {
      return (i >= mask.size() || mask[i]) && !op->getResult(i).use_empty();
    };
    // Before anything is created: a failed pattern leaves the graph as it was.
    if (wanted(1) && !op.getWeight())
      return rewriter.notifyMatchFailure(op,
                                         "a weight gradient without weight");
    Value xhat = mul(rewriter, loc,
                     rewriter.create<AtenSubTensorOp>(
                         loc, type, x, op.getMean(), Attribute()),
                     op.getRstd());
    Value dx, dw, db;
    if (wanted(0)) {
      Value g = op.getWeight() ? mul(rewriter, loc, dy, op.getWeight()) : dy;
      Value inner = rewriter.create<AtenSubTensorOp>(
          loc, type,
          rewriter.create<AtenSubTensorOp>(loc, type, g, rowMean(g),
                                           Attribute()),
          mul(rewriter, loc, xhat, rowMean(mul(rewriter, loc, g, xhat))),
          Attribute());
      dx = mul(rewriter, loc, inner, op.getRstd());
    }
    if (wanted(1)) {
      dw = leadSum(mul(rewriter, loc, dy, xhat), op.getResult1().getType());
    }
    if (wanted(2))
      db = leadSum(dy, op.getResult2().getType());
    rewriter.replaceOp(op, {dx, dw, db});
    return success();
  }
};

/// native_layer_norm(x, shape, w, b, eps) whose mean or rstd a backward pass
/// reads (a training forward): mean = mean(x), rstd = rsqrt(mean((x -
/// mean)^2) + eps) over the normalized dims, y = (x - mean) * rstd * w + b.
/// Without such a reader, the fused layer norm kernel stays. A bf16/f16 x
/// with f32 statistics (a target that keeps the op in bf16) is computed in
/// f32 and y rounded once, as ATen's kernel does.
struct LayerNormWithStatistics : OpRewritePattern<AtenNativeLayerNormOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AtenNativeLayerNormOp op,
                                PatternRewriter &rewriter) const override {
    if (op.getResult1().use_empty() && op.getResult2().use_empty())
      return rewriter.notifyMatchFailure(op, "no statistics read");
    Location loc = op.getLoc();
    Value x = op.getInput();
    auto type = x.getType().cast<RankedTensorType>();
    auto rowType = op.getResult1().getType().cast<RankedTensorType>();
    int64_t rank = type.getRank(), k = int64_t(op.getNormalizedShape().size());
    Type narrow = type.getElementType(), wide = rowType.getElementType();
    bool widened = narrow != wide;
    if (k == 0 || k > rank || rowType.getRank() != rank ||
        (widened && !(wide.isF32() && (narrow.isBF16() || narrow.isF16()))))
      return rewriter.notifyMatchFailure(op, "unexpected statistics shape");
    auto toWide = [&](Value v) {
      return widened ? dynoc::convertElementType(rewriter, loc, v, wide) : v;
    };
    x = toWide(x);
    type = RankedTensorType::get(type.getShape(), wide);
    SmallVector<int64_t> normDims;
    for (int64_t d = rank - k; d < rank; ++d)
      normDims.push_back(d);
    auto rowMean = [&](Value v) -> Value {
      return rewriter.create<AtenMeanDimOp>(
          loc, rowType, v, rewriter.getDenseI64ArrayAttr(normDims),
          rewriter.getBoolAttr(true), TypeAttr());
    };
    Value mean = rowMean(x);
    Value centered =
        rewriter.create<AtenSubTensorOp>(loc, type, x, mean, Attribute());
    Value var = rowMean(mul(rewriter, loc, centered, centered));
    Value rstd = rewriter.create<AtenRsqrtOp>(
        loc, rowType,
        rewriter.create<AtenAddScalarOp>(
            loc, rowType, var, f64(rewriter, op.getEps().convertToDouble()),
            Attribute()));
    Value y = mul(rewriter, loc, centered, rstd);
    if (op.getWeight())
      y = mul(rewriter, loc, y, toWide(op.getWeight()));
    if (op.getBias())
      y = add(rewriter, loc, y, toWide(op.getBias()));
    if (widened)
      y = dynoc::convertElementType(rewriter, loc, y, narrow);
    rewriter.replaceOp(op, {y, mean, rstd});
    return success();
  }
};

/// constant_pad_nd's pad list that puts `left` and `right` zeros around dim
/// `dim` of a rank-`rank` tensor (pairs from the last dim backwards).
DenseI64ArrayAttr padAround(PatternRewriter &rewriter, int64_t rank,
                            int64_t dim, int64_t left, int64_t right) {
  SmallVector<int64_t> pad(2 * (rank - dim), 0);
  pad[2 * (rank - 1 - dim)] = left;
  pad[2 * (rank - 1 - dim) + 1] = right;
  return rewriter.getDenseI64ArrayAttr(pad);
}

/// slice_backward(g, sizes, dim, start, end, 1): g with zeros around it along
/// `dim` (a strided slice's gradient is not a pad).
struct SliceBackward : OpRewritePattern<AtenSliceBackwardOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AtenSliceBackwardOp op,
                                PatternRewriter &rewriter) const override {
    ArrayRef<int64_t> sizes = op.getInputSizes();
    int64_t rank = int64_t(sizes.size()), dim = int64_t(op.getDim());
    if (dim < 0)
      dim += rank;
    if (int64_t(op.getStep()) != 1 || dim < 0 || dim >= rank ||
        ShapedType::isDynamic(sizes[dim]))
      return rewriter.notifyMatchFailure(op, "a strided or dynamic slice");
    int64_t size = sizes[dim];
    auto clamp = [&](int64_t i) {
      if (i < 0)
        i += size;
      return std::min(std::max<int64_t>(i, 0), size);
    };
    int64_t start = clamp(int64_t(op.getStart())),
            end = std::max(start, clamp(int64_t(op.getEnd())));
    rewriter.replaceOpWithNewOp<AtenConstantPadNdOp>(
        op, op.getType(), op.getGradOutput(),
        padAround(rewriter, rank, dim, start, size - end), f64(rewriter, 0.0));
    return success();
  }
};

/// select_backward(g, sizes, dim, index): g as a size-1 dim `dim`, with zeros
/// around it.
struct SelectBackward : OpRewritePattern<AtenSelectBackwardOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AtenSelectBackwardOp op,
                                PatternRewriter &rewriter) const override {
    ArrayRef<int64_t> sizes = op.getInputSizes();
    int64_t rank = int64_t(sizes.size()), dim = int64_t(op.getDim());
    if (dim < 0)
      dim += rank;
    if (dim < 0 || dim >= rank || ShapedType::isDynamic(sizes[dim]))
      return rewriter.notifyMatchFailure(op, "a dynamic dim");
    // ODS gives i64 attributes as uint64_t: read them signed.
    int64_t index = int64_t(op.getIndex());
    if (index < 0)
      index += sizes[dim];
    auto type = op.getType().cast<RankedTensorType>();
    SmallVector<int64_t> shape(type.getShape());
    shape[dim] = 1;
    Value g = rewriter.create<AtenUnsqueezeOp>(
        op.getLoc(), RankedTensorType::get(shape, type.getElementType()),
        op.getGradOutput(), rewriter.getI64IntegerAttr(dim));
    rewriter.replaceOpWithNewOp<AtenConstantPadNdOp>(
        op, op.getType(), g,
        padAround(rewriter, rank, dim, index, sizes[dim] - index - 1),
        f64(rewriter, 0.0));
    return success();
  }
};
/// Elementwise pieces of the activation gradients and losses below, at one
/// location.
struct Grad {
  PatternRewriter &r;
  Location loc;
  Type type; // the gradient's
  Value mask(Value x, StringRef cmp, double bound) {
    auto t = RankedTensorType::get(x.getType().cast<RankedTensorType>().getShape(),
                                   r.getI1Type());
    Attribute b = f64(r, bound);
    if (cmp == "gt")
      return r.create<AtenGtScalarOp>(loc, t, x, b);
    if (cmp == "le")
      return r.create<AtenLeScalarOp>(loc, t, x, b);
    if (cmp == "ge")
      return r.create<AtenGeScalarOp>(loc, t, x, b);
    return r.create<AtenLtScalarOp>(loc, t, x, b);
  }
  Value scale(Value x, double c) {
    return r.create<AtenMulScalarOp>(loc, x.getType(), x, f64(r, c));
  }
  Value mul(Value a, Value b) { return r.create<AtenMulTensorOp>(loc, type, a, b); }
  /// v with 0 where `m` holds.
  Value zeroWhere(Value v, Value m) {
    return r.create<AtenMaskedFillScalarOp>(loc, type, v, m, f64(r, 0.0));
  }
  /// v with 0 where x <= lo or x >= hi (a clamp's gradient).
  Value zeroOutside(Value v, Value x, double lo, double hi) {
    Value below = zeroWhere(v, mask(x, "le", lo)); // one op after the other
    return zeroWhere(below, mask(x, "ge", hi));
  }
  Value where(Value m, Value a, Value b) {
    return r.create<AtenWhereSelfOp>(loc, type, m, a, b);
  }
  /// A loss's reduction (ATen's: 0 none, 1 mean, the default, 2 sum).
  Value reduce(Value loss, std::optional<uint64_t> reduction, Type result) {
    int64_t kind = reduction.value_or(1);
    if (kind == 1)
      return r.create<AtenMeanOp>(loc, result, loss, TypeAttr());
    if (kind == 2)
      return r.create<AtenSumOp>(loc, result, loss, TypeAttr());
    return loss;
  }
};

double number(Attribute a, double dflt) {
  if (auto f = a.dyn_cast_or_null<FloatAttr>())
    return f.getValueAsDouble();
  if (auto i = a.dyn_cast_or_null<IntegerAttr>())
    return double(i.getInt());
  return dflt;
}

/// leaky_relu_backward(g, x, slope) = x > 0 ? g : g * slope (ATen's test,
/// also on the result when self_is_result).
struct LeakyReluBackward : OpRewritePattern<AtenLeakyReluBackwardOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AtenLeakyReluBackwardOp op,
                                PatternRewriter &rewriter) const override {
    Grad b{rewriter, op.getLoc(), op.getType()};
    Value g = op.getGradOutput();
    rewriter.replaceOp(op, b.where(b.mask(op.getSelf(), "gt", 0), g,
                                   b.scale(g, number(op.getNegativeSlope(), 0.01))));
    return success();
  }
};

/// elu_backward(g, alpha, scale, input_scale, is_result, v), as ATen:
/// v <= 0 ? g * input_scale * (v + alpha * scale) (v the result) or
/// g * input_scale * alpha * scale * exp(v * input_scale) (v the input)
/// : g * scale.
struct EluBackward : OpRewritePattern<AtenEluBackwardOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AtenEluBackwardOp op,
                                PatternRewriter &rewriter) const override {
    Grad b{rewriter, op.getLoc(), op.getType()};
    double alpha = number(op.getAlpha(), 1), scale = number(op.getScale(), 1),
           input = number(op.getInputScale(), 1);
    Value g = op.getGradOutput(), v = op.getSelfOrResult();
    Value negative;
    if (op.getIsResult())
      negative = b.mul(b.scale(g, input),
                       rewriter.create<AtenAddScalarOp>(op.getLoc(), v.getType(), v,
                                                        f64(rewriter, alpha * scale),
                                                        Attribute()));
    else
      negative = b.mul(b.scale(b.scale(g, input), alpha * scale),
                       rewriter.create<AtenExpOp>(op.getLoc(), v.getType(),
                                                  b.scale(v, input)));
    rewriter.replaceOp(op, b.where(b.mask(v, "le", 0), negative, b.scale(g, scale)));
    return success();
  }
};

/// softplus_backward(g, x, beta, threshold), as ATen: z = exp(x * beta);
/// x * beta > threshold ? g : g * z / (z + 1).
struct SoftplusBackward : OpRewritePattern<AtenSoftplusBackwardOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AtenSoftplusBackwardOp op,
                                PatternRewriter &rewriter) const override {
    Grad b{rewriter, op.getLoc(), op.getType()};
    Location loc = op.getLoc();
    Value g = op.getGradOutput();
    Value xb = b.scale(op.getSelf(), number(op.getBeta(), 1));
    Value z = rewriter.create<AtenExpOp>(loc, xb.getType(), xb);
    Value z1 = rewriter.create<AtenAddScalarOp>(loc, z.getType(), z,
                                                f64(rewriter, 1.0), Attribute());
    Value smooth = rewriter.create<AtenDivTensorOp>(loc, op.getType(), b.mul(g, z), z1);
    rewriter.replaceOp(op, b.where(b.mask(xb, "gt", number(op.getThreshold(), 20)),
                                   g, smooth));
    return success();
  }
};

/// hardswish_backward(g, x), as ATen: x < -3 ? 0 : x <= 3 ? g * (x / 3 +
/// 0.5) : g.
struct HardswishBackward : OpRewritePattern<AtenHardswishBackwardOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AtenHardswishBackwardOp op,
                                PatternRewriter &rewriter) const override {
    Grad b{rewriter, op.getLoc(), op.getType()};
    Location loc = op.getLoc();
    Value g = op.getGradOutput(), x = op.getSelf();
    Value third = rewriter.create<AtenDivScalarOp>(loc, x.getType(), x, f64(rewriter, 3.0));
    Value slope = rewriter.create<AtenAddScalarOp>(loc, x.getType(), third,
                                                   f64(rewriter, 0.5), Attribute());
    Value inside = b.where(b.mask(x, "le", 3), b.mul(g, slope), g);
    rewriter.replaceOpWithNewOp<AtenMaskedFillScalarOp>(
        op, op.getType(), inside, b.mask(x, "lt", -3), f64(rewriter, 0.0));
    return success();
  }
};

/// hardsigmoid_backward(g, x), as ATen: -3 < x < 3 ? g / 6 : 0.
struct HardsigmoidBackward : OpRewritePattern<AtenHardsigmoidBackwardOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AtenHardsigmoidBackwardOp op,
                                PatternRewriter &rewriter) const override {
    Grad b{rewriter, op.getLoc(), op.getType()};
    rewriter.replaceOp(op, b.zeroOutside(b.scale(op.getGradOutput(), 1.0 / 6.0),
                                         op.getSelf(), -3, 3));
    return success();
  }
};

/// hardtanh_backward(g, x, lo, hi), as ATen: x <= lo || x >= hi ? 0 : g.
struct HardtanhBackward : OpRewritePattern<AtenHardtanhBackwardOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AtenHardtanhBackwardOp op,
                                PatternRewriter &rewriter) const override {
    Grad b{rewriter, op.getLoc(), op.getType()};
    rewriter.replaceOp(op, b.zeroOutside(op.getGradOutput(), op.getSelf(),
                                         number(op.getMinVal(), -1),
                                         number(op.getMaxVal(), 1)));
    return success();
  }
};

/// mish_backward(g, x), as ATen: t = tanh(log1p(exp(x))); g * (t + x *
/// sigmoid(x) * (1 - t * t)).
struct MishBackward : OpRewritePattern<AtenMishBackwardOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AtenMishBackwardOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = op.getSelf();
    Type t = x.getType();
    Grad b{rewriter, loc, t};
    Value softplus = rewriter.create<AtenLog1pOp>(loc, t, rewriter.create<AtenExpOp>(loc, t, x));
    Value th = rewriter.create<AtenTanhOp>(loc, t, softplus);
    Value sig = rewriter.create<AtenSigmoidOp>(loc, t, x);
    Value slope = b.mul(b.mul(x, sig), oneMinus(rewriter, loc, b.mul(th, th)));
    Value d = rewriter.create<AtenAddTensorOp>(loc, t, th, slope, Attribute());
    rewriter.replaceOpWithNewOp<AtenMulTensorOp>(op, op.getType(), op.getGradOutput(), d);
    return success();
  }
};

/// glu_backward(g, x, dim), a and b the halves of x along dim, s =
/// sigmoid(b): cat(g * s, g * a * s * (1 - s)) (static, even dim).
struct GluBackward : OpRewritePattern<AtenGluBackwardOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AtenGluBackwardOp op,
                                PatternRewriter &rewriter) const override {
    auto halfType = op.getGradOutput().getType().cast<RankedTensorType>();
    Location loc = op.getLoc();
    auto halves = dynoc::decompositions::halvesAlong(rewriter, loc, op.getSelf(),
                                                     op.getDim(), halfType);
    if (!halves)
      return rewriter.notifyMatchFailure(op, "not an even static dim");
    Grad b{rewriter, loc, halfType};
    Value g = op.getGradOutput(), a = halves->first;
    Value s = rewriter.create<AtenSigmoidOp>(loc, halfType, halves->second);
    Value gradA = b.mul(g, s);
    Value gradB = b.mul(b.mul(b.mul(g, a), s), oneMinus(rewriter, loc, s));
    int64_t dim = op.getDim();
    if (dim < 0)
      dim += op.getSelf().getType().cast<RankedTensorType>().getRank();
    rewriter.replaceOpWithNewOp<AtenCatOp>(op, op.getType(), ValueRange{gradA, gradB},
                                           rewriter.getI64IntegerAttr(dim));
    return success();
  }
};

/// log_sigmoid_backward(g, x, buffer), as ATen with z = exp(-|x|) computed
/// again (CUDA's buffer is empty): g * (x < 0 ? 1 : z) / (1 + z).
struct LogSigmoidBackward : OpRewritePattern<AtenLogSigmoidBackwardOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AtenLogSigmoidBackwardOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = op.getSelf();
    Type t = x.getType();
    Grad b{rewriter, loc, t};
    Value z = dynoc::decompositions::expNegAbs(rewriter, loc, x);
    Value top = rewriter.create<AtenMaskedFillScalarOp>(loc, t, z, b.mask(x, "lt", 0),
                                                        f64(rewriter, 1.0));
    Value bottom = rewriter.create<AtenAddScalarOp>(loc, t, z, f64(rewriter, 1.0),
                                                    Attribute());
    Value d = rewriter.create<AtenDivTensorOp>(loc, t, top, bottom);
    rewriter.replaceOpWithNewOp<AtenMulTensorOp>(op, op.getType(), op.getGradOutput(), d);
    return success();
  }
};

/// hardshrink_backward(g, x, l) and softshrink_backward(g, x, l), as ATen:
/// |x| <= l ? 0 : g.
template <class Op>
struct ShrinkBackward : OpRewritePattern<Op> {
  using OpRewritePattern<Op>::OpRewritePattern;
  LogicalResult matchAndRewrite(Op op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = op.getSelf();
    Grad b{rewriter, loc, op.getType()};
    Value abs = rewriter.create<AtenAbsOp>(loc, x.getType(), x);
    rewriter.replaceOp(op, b.zeroWhere(op->getOperand(0), // grad_out / grad_output
                                       b.mask(abs, "le", number(op.getLambdAttr(), 0.5))));
    return success();
  }
};

/// binary_cross_entropy(x, y, w, reduction), as ATen's CPU kernel: w * ((y -
/// 1) * max(log1p(-x), -100) - y * max(log(x), -100)), then the mean or the
/// sum. An x outside [0, 1], where ATen raises, gives NaN here.
struct BinaryCrossEntropy : OpRewritePattern<AtenBinaryCrossEntropyOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AtenBinaryCrossEntropyOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type t = op.getSelf().getType();
    Grad b{rewriter, loc, t};
    Value x = op.getSelf(), y = op.getTarget();
    auto floor = [&](Value v) {
      return rewriter.create<AtenClampMinOp>(loc, t, v, f64(rewriter, -100.0));
    };
    Value logNot = floor(rewriter.create<AtenLog1pOp>(
        loc, t, rewriter.create<AtenNegOp>(loc, t, x)));
    Value logX = floor(rewriter.create<AtenLogOp>(loc, t, x));
    Value yMinus1 = rewriter.create<AtenSubScalarOp>(loc, t, y, f64(rewriter, 1.0),
                                                     Attribute());
    Value loss = rewriter.create<AtenSubTensorOp>(loc, t, b.mul(yMinus1, logNot),
                                                  b.mul(y, logX), Attribute());
    if (Value w = op.getWeight())
      loss = b.mul(w, loss);
    rewriter.replaceOp(op, b.reduce(loss, op.getReduction(), op.getType()));
    return success();
  }
};

/// binary_cross_entropy_with_logits(x, y, w, pos_weight, reduction), as
/// ATen: (1 - y) * x - log_sigmoid(x) * ((pos_weight - 1) * y + 1), times w,
/// then the mean or the sum; log_sigmoid(x) = min(x, 0) - log1p(exp(-|x|)).
/// Its backward is composite (recorded as these ops' gradients).
struct BinaryCrossEntropyWithLogits
    : OpRewritePattern<AtenBinaryCrossEntropyWithLogitsOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AtenBinaryCrossEntropyWithLogitsOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = op.getSelf(), y = op.getTarget();
    Type t = x.getType();
    Grad b{rewriter, loc, t};
    Value magnitude = rewriter.create<AtenAbsOp>(loc, t, x);
    Value tail = rewriter.create<AtenLog1pOp>(
        loc, t,
        rewriter.create<AtenExpOp>(loc, t,
                                   rewriter.create<AtenNegOp>(loc, t, magnitude)));
    Value head = rewriter.create<AtenClampMaxOp>(loc, t, x, f64(rewriter, 0.0));
    Value logSigmoid =
        rewriter.create<AtenSubTensorOp>(loc, t, head, tail, Attribute());
    if (Value pw = op.getPosWeight()) {
      Value pw1 = rewriter.create<AtenSubScalarOp>(loc, pw.getType(), pw,
                                                   f64(rewriter, 1.0), Attribute());
      Value logWeight = rewriter.create<AtenAddScalarOp>(
          loc, t, b.mul(pw1, y), f64(rewriter, 1.0), Attribute());
      logSigmoid = b.mul(logSigmoid, logWeight);
    }
    Value loss = rewriter.create<AtenSubTensorOp>(
        loc, t, b.mul(oneMinus(rewriter, loc, y), x), logSigmoid, Attribute());
    if (Value w = op.getWeight())
      loss = b.mul(loss, w);
    rewriter.replaceOp(op, b.reduce(loss, op.getReduction(), op.getType()));
    return success();
  }
};

/// binary_cross_entropy_backward(g, x, y, w, reduction), as ATen: g * (x -
/// y) / max((1 - x) * x, 1e-12), times w, divided by x's element count for
/// the mean (static shapes).
struct BinaryCrossEntropyBackward
    : OpRewritePattern<AtenBinaryCrossEntropyBackwardOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AtenBinaryCrossEntropyBackwardOp op,
                                PatternRewriter &rewriter) const override {
    auto type = op.getSelf().getType().cast<RankedTensorType>();
    int64_t reduction = op.getReduction().value_or(1);
    if (reduction == 1 && !type.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "a mean over a dynamic shape");
    Location loc = op.getLoc();
    Grad b{rewriter, loc, op.getType()};
    Value x = op.getSelf();
    Value diff = rewriter.create<AtenSubTensorOp>(loc, type, x, op.getTarget(),
                                                  Attribute());
    Value var = rewriter.create<AtenClampMinOp>(
        loc, type, b.mul(oneMinus(rewriter, loc, x), x), f64(rewriter, 1e-12));
    Value grad = rewriter.create<AtenDivTensorOp>(
        loc, op.getType(), b.mul(op.getGradOutput(), diff), var);
    if (Value w = op.getWeight())
      grad = b.mul(grad, w);
    if (reduction == 1)
      grad = rewriter.create<AtenDivScalarOp>(loc, op.getType(), grad,
                                              f64(rewriter, double(type.getNumElements())));
    rewriter.replaceOp(op, grad);
    return success();
  }
};

/// The difference |x - y| of a regression loss and the loss's reduction.
struct RegressionLoss {
  PatternRewriter &r;
  Location loc;
  RankedTensorType type; // the elementwise loss's (x's)
  Value diff(Value x, Value y) {
    return r.create<AtenSubTensorOp>(loc, type, x, y, Attribute());
  }
  Value half(Value v, double c) { return Grad{r, loc, type}.scale(v, 0.5 * c); }
  Value reduce(Value loss, std::optional<uint64_t> reduction, Type result) {
    return Grad{r, loc, type}.reduce(loss, reduction, result);
  }
  /// A backward's gradient of the mean: divided by the element count.
  Value meanGrad(Value grad, std::optional<uint64_t> reduction) {
    if (reduction.value_or(1) != 1)
      return grad;
    return r.create<AtenDivScalarOp>(loc, type, grad,
                                     f64(r, double(type.getNumElements())));
  }
};

/// huber_loss(x, y, delta), as ATen: d = |x - y|; d < delta ? d * d / 2 :
/// delta * (d - delta / 2); then the reduction. smooth_l1_loss(x, y, beta)
/// is huber_loss / beta (beta = 0: |x - y|).
template <typename Op>
struct PiecewiseQuadraticLoss : OpRewritePattern<Op> {
  using OpRewritePattern<Op>::OpRewritePattern;
  LogicalResult matchAndRewrite(Op op, PatternRewriter &rewriter) const override {
    auto type = op.getSelf().getType().template cast<RankedTensorType>();
    Location loc = op.getLoc();
    RegressionLoss l{rewriter, loc, type};
    Grad b{rewriter, loc, type};
    constexpr bool smooth = std::is_same_v<Op, AtenSmoothL1LossOp>;
    double edge;
    if constexpr (smooth)
      edge = number(op.getBetaAttr(), 1.0);
    else
      edge = number(op.getDeltaAttr(), 1.0);
    Value d = rewriter.create<AtenAbsOp>(loc, type, l.diff(op.getSelf(), op.getTarget()));
    Value loss = d;
    if (edge != 0) {
      // huber: d*d/2 inside, delta*d - delta*delta/2 outside; / beta for smooth.
      double over = smooth ? 1.0 / edge : 1.0;
      Value inside = b.scale(b.mul(d, d), 0.5 * over);
      Value outside = rewriter.create<AtenSubScalarOp>(
          loc, type, b.scale(d, edge * over), f64(rewriter, 0.5 * edge * edge * over),
          Attribute());
      loss = b.where(b.mask(d, "lt", edge), inside, outside);
    }
    rewriter.replaceOp(op, l.reduce(loss, op.getReduction(), op.getType()));
    return success();
  }
};

/// huber_loss_backward(g, x, y, delta) = g * clamp(x - y, -delta, delta);
/// smooth_l1_loss_backward(g, x, y, beta) = g * clamp((x - y) / beta, -1, 1)
/// (beta = 0: g * sgn(x - y)); the mean's divided by the count.
template <typename Op>
struct PiecewiseQuadraticLossBackward : OpRewritePattern<Op> {
  using OpRewritePattern<Op>::OpRewritePattern;
  LogicalResult matchAndRewrite(Op op, PatternRewriter &rewriter) const override {
    auto type = op.getSelf().getType().template cast<RankedTensorType>();
    if (!type.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "a loss over a dynamic shape");
    Location loc = op.getLoc();
    RegressionLoss l{rewriter, loc, type};
    Grad b{rewriter, loc, type};
    constexpr bool smooth = std::is_same_v<Op, AtenSmoothL1LossBackwardOp>;
    double edge;
    if constexpr (smooth)
      edge = number(op.getBetaAttr(), 1.0);
    else
      edge = number(op.getDeltaAttr(), 1.0);
    Value d = l.diff(op.getSelf(), op.getTarget());
    Value slope;
    if (smooth && edge == 0)
      slope = rewriter.create<AtenSgnOp>(loc, type, d);
    else if (smooth)
      slope = rewriter.create<AtenClampOp>(loc, type, b.scale(d, 1.0 / edge),
                                           f64(rewriter, -1.0), f64(rewriter, 1.0));
    else
      slope = rewriter.create<AtenClampOp>(loc, type, d, f64(rewriter, -edge),
                                           f64(rewriter, edge));
    std::optional<uint64_t> reduction = op.getReduction();
    rewriter.replaceOp(op, l.meanGrad(b.mul(op.getGradOutput(), slope), reduction));
    return success();
  }
};
} // namespace

void dynoc::populateBackwardDecompositions(RewritePatternSet &patterns) {
  patterns.add<ThresholdBackward, SigmoidBackward, TanhBackward,
               MseLossBackward, SoftmaxBackward, LogSoftmaxBackward,
               NllLossBackward, GeluBackward, SiluBackward, LayerNormBackward,
               LayerNormWithStatistics, SliceBackward, SelectBackward,
               LeakyReluBackward, EluBackward, SoftplusBackward,
               HardswishBackward, HardsigmoidBackward, HardtanhBackward,
               MishBackward, GluBackward, LogSigmoidBackward,
               ShrinkBackward<AtenHardshrinkBackwardOp>,
               ShrinkBackward<AtenSoftshrinkBackwardOp>, BinaryCrossEntropy,
               BinaryCrossEntropyWithLogits, BinaryCrossEntropyBackward,
               PiecewiseQuadraticLoss<AtenHuberLossOp>,
               PiecewiseQuadraticLoss<AtenSmoothL1LossOp>,
               PiecewiseQuadraticLossBackward<AtenHuberLossBackwardOp>,
               PiecewiseQuadraticLossBackward<AtenSmoothL1LossBackwardOp>>(
      patterns.getContext());
}
