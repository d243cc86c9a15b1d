//===- PointwiseDecompositions.cpp - composite pointwise ops -> core ops --===//
//
// The composite pointwise ops optimizers call (Adam's lerp_, addcmul_,
// addcdiv_, the bias corrections' rsub) as the elementwise ops both backends
// emit and fuse. Each keeps ATen's CPU kernel's order of operations, so an
// update graph rounds as eager does: addcmul is self + (value * t1) * t2,
// addcdiv self + (value * t1) / t2, and lerp takes the form ATen picks for its
// weight. Intermediate values take the broadcast shape of their operands,
// which the declarative table in Decompositions.td cannot compute. Also
// _safe_softmax (softmax with fully masked rows at 0) and tril/triu (its
// causal mask), which the attention of torch's SDPA math path records,
// clamp with tensor bounds as maximum and minimum, and glu as a product with
// a sigmoid.
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
/// The type of an elementwise op on `a` and `b` (static broadcasting; a
/// dynamic dim stays dynamic) with the element type of `like`.
Type broadcastType(Value a, Value b, Value like) {
  auto at = a.getType().cast<RankedTensorType>(),
       bt = b.getType().cast<RankedTensorType>();
  int64_t rank = std::max(at.getRank(), bt.getRank());
  SmallVector<int64_t> shape(rank, 1);
  for (int64_t d = 0; d < rank; ++d) {
    int64_t ad = d - (rank - at.getRank()), bd = d - (rank - bt.getRank());
    int64_t x = ad >= 0 ? at.getDimSize(ad) : 1,
            y = bd >= 0 ? bt.getDimSize(bd) : 1;
    shape[d] = x == 1 ? y : (y == 1 || x == y) ? x : ShapedType::kDynamic;
  }
  return RankedTensorType::get(
      shape, like.getType().cast<RankedTensorType>().getElementType());
}

std::optional<double> number(Attribute a) {
  if (auto f = a.dyn_cast_or_null<FloatAttr>())
    return f.getValueAsDouble();
  if (auto i = a.dyn_cast_or_null<IntegerAttr>())
    return double(i.getInt());
  return std::nullopt;
}

/// value * t1, or t1 when there is no value (it defaults to 1).
Value scaled(PatternRewriter &rewriter, Location loc, Value t1,
             Attribute value) {
  if (!value || number(value) == 1.0)
    return t1;
  return rewriter.create<AtenMulScalarOp>(loc, t1.getType(), t1, value);
}

/// addcmul(self, t1, t2, value) = self + (value * t1) * t2.
struct Addcmul : OpRewritePattern<AtenAddcmulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AtenAddcmulOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value t1 = scaled(rewriter, loc, op.getTensor1(), op.getValueAttr());
    Value prod = rewriter.create<AtenMulTensorOp>(
        loc, broadcastType(t1, op.getTensor2(), op.getSelf()), t1,
        op.getTensor2());
    rewriter.replaceOpWithNewOp<AtenAddTensorOp>(op, op.getType(), op.getSelf(),
                                                 prod, Attribute());
    return success();
  }
};

/// addcdiv(self, t1, t2, value) = self + (value * t1) / t2.
struct Addcdiv : OpRewritePattern<AtenAddcdivOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AtenAddcdivOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    if (!op.getTensor1()
             .getType()
             .cast<ShapedType>()
             .getElementType()
             .isa<FloatType>())
      return rewriter.notifyMatchFailure(op, "integer division");
    Value t1 = scaled(rewriter, loc, op.getTensor1(), op.getValueAttr());
    Value quot = rewriter.create<AtenDivTensorOp>(
        loc, broadcastType(t1, op.getTensor2(), op.getSelf()), t1,
        op.getTensor2());
    rewriter.replaceOpWithNewOp<AtenAddTensorOp>(op, op.getType(), op.getSelf(),
                                                 quot, Attribute());
    return success();
  }
};

/// lerp(self, end, w) = self + w * (end - self) for |w| < 0.5, else
/// end - (end - self) * (1 - w): ATen's two forms, picked as it picks them.
struct LerpScalar : OpRewritePattern<AtenLerpScalarOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AtenLerpScalarOp op,
                                PatternRewriter &rewriter) const override {
    std::optional<double> w = number(op.getWeightAttr());
    if (!w)
      return rewriter.notifyMatchFailure(op, "weight is not a number");
    Location loc = op.getLoc();
    Value diff = rewriter.create<AtenSubTensorOp>(
        loc, broadcastType(op.getEnd(), op.getSelf(), op.getSelf()),
        op.getEnd(), op.getSelf(), Attribute());
    if (std::fabs(*w) < 0.5) {
      Value step = rewriter.create<AtenMulScalarOp>(loc, diff.getType(), diff,
                                                    op.getWeightAttr());
      rewriter.replaceOpWithNewOp<AtenAddTensorOp>(
          op, op.getType(), op.getSelf(), step, Attribute());
      return success();
    }
    Value step = rewriter.create<AtenMulScalarOp>(
        loc, diff.getType(), diff, rewriter.getF64FloatAttr(1.0 - *w));
    rewriter.replaceOpWithNewOp<AtenSubTensorOp>(op, op.getType(), op.getEnd(),
                                                 step, Attribute());
    return success();
  }
};

/// rsub(x, other, alpha) = other - alpha * x, as -(alpha * x) + other.
struct RsubScalar : OpRewritePattern<AtenRsubScalarOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AtenRsubScalarOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = scaled(rewriter, loc, op.getSelf(), op.getAlphaAttr());
    Value neg = rewriter.create<AtenNegOp>(loc, x.getType(), x);
    rewriter.replaceOpWithNewOp<AtenAddScalarOp>(
        op, op.getType(), neg, op.getOtherAttr(), Attribute());
    return success();
  }
};

/// rsub(x, y, alpha) = y - alpha * x.
struct RsubTensor : OpRewritePattern<AtenRsubTensorOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AtenRsubTensorOp op,
                                PatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<AtenSubTensorOp>(
        op, op.getType(), op.getOther(), op.getSelf(), op.getAlphaAttr());
    return success();
  }
};
/// _safe_softmax(x, dim) (the attention softmax of torch's SDPA math path):
/// softmax, with 0 for rows that are all -inf (fully masked) instead of NaN.
struct SafeSoftmax : OpRewritePattern<SafeSoftmaxOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SafeSoftmaxOp op,
                                PatternRewriter &rewriter) const override {
    auto type = op.getType().cast<RankedTensorType>();
    if (op.getSelf().getType() != type)
      return rewriter.notifyMatchFailure(op, "a dtype conversion");
    Location loc = op.getLoc();
    int64_t rank = type.getRank(), dim = int64_t(op.getDim());
    if (dim < 0)
      dim += rank;
    SmallVector<int64_t> rowShape(type.getShape());
    rowShape[dim] = 1;
    Value softmax = rewriter.create<SoftmaxOp>(loc, type, op.getSelf(),
                                               rewriter.getI64IntegerAttr(dim),
                                               rewriter.getBoolAttr(false));
    Value rowMax = rewriter.create<AtenAmaxOp>(
        loc, RankedTensorType::get(rowShape, type.getElementType()),
        op.getSelf(), rewriter.getDenseI64ArrayAttr({dim}),
        rewriter.getBoolAttr(true));
    Value masked = rewriter.create<AtenEqScalarOp>(
        loc, RankedTensorType::get(rowShape, rewriter.getI1Type()), rowMax,
        rewriter.getF64FloatAttr(-INFINITY));
    rewriter.replaceOpWithNewOp<AtenMaskedFillScalarOp>(
        op, type, softmax, masked, rewriter.getF64FloatAttr(0.0));
    return success();
  }
};

/// tril(x, d) (kLower) and triu(x, d): x where col - row <= d (>= d for
/// triu) over the last two dims, else 0, as an index comparison and a
/// masked_fill (the causal mask of torch's SDPA math path on CUDA). Those
/// two dims must be static.
template <class Op, bool kLower>
struct Triangle : OpRewritePattern<Op> {
  using OpRewritePattern<Op>::OpRewritePattern;
  LogicalResult matchAndRewrite(Op op,
                                PatternRewriter &rewriter) const override {
    auto type = op.getType().template cast<RankedTensorType>();
    int64_t rank = type.getRank();
    if (rank < 2 || type.isDynamicDim(rank - 2) || type.isDynamicDim(rank - 1))
      return rewriter.notifyMatchFailure(op, "needs static last two dims");
    int64_t h = type.getDimSize(rank - 2), w = type.getDimSize(rank - 1);
    int64_t diagonal = 0;
    if (IntegerAttr d = op.getDiagonalAttr())
      diagonal = d.getInt();
    Location loc = op.getLoc();
    Type i64 = rewriter.getI64Type();
    auto arange = [&](int64_t n) -> Value {
      return rewriter.create<AtenArangeOp>(
          loc, RankedTensorType::get({n}, i64), rewriter.getI64IntegerAttr(n),
          TypeAttr::get(i64), StringAttr(), StringAttr(), BoolAttr());
    };
    Value rows = rewriter.create<AtenUnsqueezeOp>(
        loc, RankedTensorType::get({h, 1}, i64), arange(h),
        rewriter.getI64IntegerAttr(1));
    Value diff = rewriter.create<AtenSubTensorOp>(
        loc, RankedTensorType::get({h, w}, i64), arange(w), rows, Attribute());
    auto maskType = RankedTensorType::get({h, w}, rewriter.getI1Type());
    Attribute bound = rewriter.getI64IntegerAttr(diagonal);
    Value outside =
        kLower ? rewriter.create<AtenGtScalarOp>(loc, maskType, diff, bound)
                     .getResult()
               : rewriter.create<AtenLtScalarOp>(loc, maskType, diff, bound)
                     .getResult();
    Attribute zero = type.getElementType().template isa<FloatType>()
                         ? Attribute(rewriter.getF64FloatAttr(0.0))
                         : Attribute(rewriter.getI64IntegerAttr(0));
    rewriter.replaceOpWithNewOp<AtenMaskedFillScalarOp>(op, type, op.getSelf(),
                                                        outside, zero);
    return success();
  }
};

/// clamp.Tensor(x, min?, max?): minimum(maximum(x, min), max), NaN from
/// either operand propagating as ATen's vectorized clamp does (and max
/// winning where min > max).
struct ClampTensor : OpRewritePattern<AtenClampTensorOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AtenClampTensorOp op,
                                PatternRewriter &rewriter) const override {
    Value x = op.getSelf(), result = op.getResult();
    if (Value lo = op.getMin()) {
      x = rewriter.create<AtenMaximumOp>(op.getLoc(),
                                         op.getMax() ? broadcastType(x, lo, result)
                                                     : result.getType(),
                                         x, lo);
    }
    if (Value hi = op.getMax())
      x = rewriter.create<AtenMinimumOp>(op.getLoc(), result.getType(), x, hi);
    if (x == op.getSelf() && x.getType() != result.getType())
      return rewriter.notifyMatchFailure(op, "no bounds, and a conversion");
    rewriter.replaceOp(op, x);
    return success();
  }
};

/// clamp_min.Tensor / clamp_max.Tensor: maximum / minimum (ATen's NaN rule,
/// as ClampTensor).
template <class Op, class Bound>
struct ClampOneSide : OpRewritePattern<Op> {
  using OpRewritePattern<Op>::OpRewritePattern;
  LogicalResult matchAndRewrite(Op op,
                                PatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<Bound>(op, op.getType(), op->getOperand(0),
                                       op->getOperand(1));
    return success();
  }
};

/// glu(x, dim) = a * sigmoid(b), a and b the halves of x along dim (static).
struct Glu : OpRewritePattern<AtenGluOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AtenGluOp op,
                                PatternRewriter &rewriter) const override {
    auto halfType = op.getType().cast<RankedTensorType>();
    auto halves = dynoc::decompositions::halvesAlong(
        rewriter, op.getLoc(), op.getSelf(), op.getDim().value_or(-1), halfType);
    if (!halves)
      return rewriter.notifyMatchFailure(op, "not an even static dim");
    Value gate = rewriter.create<AtenSigmoidOp>(op.getLoc(), halfType, halves->second);
    rewriter.replaceOpWithNewOp<AtenMulTensorOp>(op, halfType, halves->first, gate);
    return success();
  }
};

/// log_sigmoid_forward(x) = (min(x, 0) - log1p(z), z) with z = exp(-|x|), as
/// ATen's CPU kernel (z is the buffer its backward may read; CUDA's buffer
/// is empty, and stays so: the backward computes z again).
struct LogSigmoidForward : OpRewritePattern<AtenLogSigmoidForwardOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AtenLogSigmoidForwardOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = op.getSelf();
    Type t = x.getType();
    auto bufferType = op.getBuffer().getType().cast<RankedTensorType>();
    const bool empty = bufferType.hasStaticShape() && bufferType.getNumElements() == 0;
    if (bufferType != t && !empty)
      return rewriter.notifyMatchFailure(op, "a buffer not of the input's type");
    Value z = dynoc::decompositions::expNegAbs(rewriter, loc, x);
    Value low = rewriter.create<AtenClampMaxOp>(loc, t, x, rewriter.getF64FloatAttr(0.0));
    Value out = rewriter.create<AtenSubTensorOp>(
        loc, t, low, rewriter.create<AtenLog1pOp>(loc, t, z), Attribute());
    Value buffer = z;
    if (bufferType != t)
      buffer = rewriter.create<AtenNewZerosOp>(
          loc, bufferType, x, rewriter.getDenseI64ArrayAttr(bufferType.getShape()),
          TypeAttr(), StringAttr(), StringAttr(), BoolAttr());
    rewriter.replaceOp(op, {out, buffer});
    return success();
  }
};

/// hardshrink(x, l) = |x| <= l ? 0 : x; softshrink(x, l) = x - clamp(x, -l,
/// l) (ATen's selects; NaN stays NaN).
template <class Op>
struct Shrink : OpRewritePattern<Op> {
  using OpRewritePattern<Op>::OpRewritePattern;
  LogicalResult matchAndRewrite(Op op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = op.getSelf();
    auto type = x.getType().template cast<RankedTensorType>();
    double lambda = 0.5; // ATen's default
    if (auto a = op.getLambdAttr().template dyn_cast_or_null<FloatAttr>())
      lambda = a.getValueAsDouble();
    else if (auto i = op.getLambdAttr().template dyn_cast_or_null<IntegerAttr>())
      lambda = double(i.getInt());
    if constexpr (std::is_same_v<Op, AtenSoftshrinkOp>) {
      Value inside = rewriter.create<AtenClampOp>(loc, type, x,
                                                  rewriter.getF64FloatAttr(-lambda),
                                                  rewriter.getF64FloatAttr(lambda));
      rewriter.replaceOpWithNewOp<AtenSubTensorOp>(op, op.getType(), x, inside,
                                                   Attribute());
    } else {
      auto maskType = RankedTensorType::get(type.getShape(), rewriter.getI1Type());
      Value small = rewriter.create<AtenLeScalarOp>(
          loc, maskType, rewriter.create<AtenAbsOp>(loc, type, x),
          rewriter.getF64FloatAttr(lambda));
      rewriter.replaceOpWithNewOp<AtenMaskedFillScalarOp>(
          op, op.getType(), x, small, rewriter.getF64FloatAttr(0.0));
    }
    return success();
  }
};
} // namespace

void dynoc::populatePointwiseDecompositions(RewritePatternSet &patterns) {
  patterns
      .add<Addcmul, Addcdiv, LerpScalar, RsubScalar, RsubTensor, SafeSoftmax,
           Triangle<AtenTrilOp, true>, Triangle<AtenTriuOp, false>,
           ClampTensor, ClampOneSide<AtenClampMinTensorOp, AtenMaximumOp>,
           ClampOneSide<AtenClampMaxTensorOp, AtenMinimumOp>, Glu,
           LogSigmoidForward, Shrink<AtenHardshrinkOp>,
           Shrink<AtenSoftshrinkOp>>(
          patterns.getContext());
}
