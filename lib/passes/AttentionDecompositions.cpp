//===- AttentionDecompositions.cpp - attention as GEMMs and a softmax -----===//
//
// For a target whose kernel library has no attention backward (CUDA; the
// CPU's flash kernel has one), `_scaled_dot_product_flash_attention_for_cpu_
// backward` as the ops both targets build: the probabilities recomputed from
// the scores (the forward's log-sum-exp is not read: the CUDA forward does not
// write it), then
//
//   dV = P^T dO,  dP = dO V^T,  dS = P * (dP - rowsum(dO * O)),
//   dQ = dS K * scale,  dK = dS^T Q * scale,
//
// the standard softmax-attention gradient (rowsum(dO * O) = rowsum(P * dP)).
// And for a target whose f32 attention kernel is slow (CUDA's runs a warp
// per query row; cuDNN's fused engines take bf16/f16 only), the f32/f64
// forward whose log-sum-exp nothing reads as softmax(Q K^T * scale) V: two
// batched GEMMs. Scores of L x S per head are materialized, as eager's math
// path does.
//
//===----------------------------------------------------------------------===//
#include "dynoc/IR/AtenDialect.h"
#include "dynoc/Passes/Passes.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/PatternMatch.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace dynoc::aten;

namespace {
RankedTensorType withShape(ArrayRef<int64_t> shape, Type element) {
  return RankedTensorType::get(shape, element);
}

/// x with its last two dims swapped.
Value transposeLast(PatternRewriter &rewriter, Location loc, Value x) {
  auto type = x.getType().cast<RankedTensorType>();
  SmallVector<int64_t> shape(type.getShape());
  std::swap(shape[shape.size() - 1], shape[shape.size() - 2]);
  return rewriter.create<AtenTransposeIntOp>(
      loc, withShape(shape, type.getElementType()), x,
      rewriter.getI64IntegerAttr(-2), rewriter.getI64IntegerAttr(-1));
}

/// x (rank 4) with its leading (batch, head) dims as one, or back.
Value reshaped(PatternRewriter &rewriter, Location loc, Value x,
               ArrayRef<int64_t> shape) {
  auto type = x.getType().cast<RankedTensorType>();
  return rewriter.create<AtenReshapeOp>(
      loc, withShape(shape, type.getElementType()), x,
      rewriter.getDenseI64ArrayAttr(shape));
}

/// a @ b over the leading (batch, head) dims, as one bmm.
Value matmul(PatternRewriter &rewriter, Location loc, Value a, Value b) {
  ArrayRef<int64_t> as = a.getType().cast<RankedTensorType>().getShape();
  ArrayRef<int64_t> bs = b.getType().cast<RankedTensorType>().getShape();
  int64_t batch = as[0] * as[1];
  Value a3 = reshaped(rewriter, loc, a, {batch, as[2], as[3]});
  Value b3 = reshaped(rewriter, loc, b, {batch, bs[2], bs[3]});
  Type element = a.getType().cast<RankedTensorType>().getElementType();
  Value c = rewriter.create<AtenBmmOp>(
      loc, withShape({batch, as[2], bs[3]}, element), a3, b3);
  return reshaped(rewriter, loc, c, {as[0], as[1], as[2], bs[3]});
}

Value scaled(PatternRewriter &rewriter, Location loc, Value x, double s) {
  return rewriter.create<AtenMulScalarOp>(loc, x.getType(), x,
                                          rewriter.getF64FloatAttr(s));
}

/// The (L, S) mask of the places causal attention leaves out (j > i, the
/// top-left alignment of torch's is_causal).
Value causalMask(PatternRewriter &rewriter, Location loc, int64_t l,
                 int64_t s) {
  Type i64 = rewriter.getI64Type();
  auto iota = [&](int64_t n, int64_t dim) {
    Value r = rewriter.create<AtenArangeOp>(
        loc, withShape({n}, i64), rewriter.getI64IntegerAttr(n),
        TypeAttr::get(i64), StringAttr(), StringAttr(), BoolAttr());
    SmallVector<int64_t> shape = dim == 0 ? SmallVector<int64_t>{1, n}
                                          : SmallVector<int64_t>{n, 1};
    return rewriter.create<AtenUnsqueezeOp>(loc, withShape(shape, i64), r,
                                            rewriter.getI64IntegerAttr(dim))
        .getResult();
  };
  return rewriter.create<AtenGtTensorOp>(
      loc, withShape({l, s}, rewriter.getI1Type()), iota(s, 0), iota(l, 1));
}

/// softmax(q k^T * scale + mask) over the keys, causal: the keys after each
/// query's own left out; (batch, heads, L, S).
Value probabilities(PatternRewriter &rewriter, Location loc, Value q, Value k,
                    Value mask, bool causal, double scale) {
  auto qt = q.getType().cast<RankedTensorType>();
  int64_t b = qt.getDimSize(0), h = qt.getDimSize(1), l = qt.getDimSize(2),
          s = k.getType().cast<RankedTensorType>().getDimSize(2);
  const double minusInf = -std::numeric_limits<double>::infinity();
  auto scoresType = withShape({b, h, l, s}, qt.getElementType());
  Value scores = scaled(
      rewriter, loc, matmul(rewriter, loc, q, transposeLast(rewriter, loc, k)),
      scale);
  if (mask) {
    auto mt = mask.getType().cast<RankedTensorType>();
    if (mt.getElementType().isInteger(1)) {
      Value dropped = rewriter.create<AtenLogicalNotOp>(loc, mt, mask);
      scores = rewriter.create<AtenMaskedFillScalarOp>(
          loc, scoresType, scores, dropped, rewriter.getF64FloatAttr(minusInf));
    } else {
      scores = rewriter.create<AtenAddTensorOp>(loc, scoresType, scores, mask,
                                                Attribute());
    }
  }
  if (causal)
    scores = rewriter.create<AtenMaskedFillScalarOp>(
        loc, scoresType, scores, causalMask(rewriter, loc, l, s),
        rewriter.getF64FloatAttr(minusInf));
  return rewriter.create<SoftmaxOp>(loc, scoresType, scores,
                                    rewriter.getI64IntegerAttr(-1),
                                    rewriter.getBoolAttr(false));
}

/// Whether q, k, v (and more) are 4-d, static, of one dtype, with as many
/// key/value heads as query heads.
LogicalResult plainHeads(PatternRewriter &rewriter, Operation *op,
                         ArrayRef<Value> operands) {
  auto qt = operands[0].getType().cast<RankedTensorType>();
  for (Value x : operands) {
    auto t = x.getType().cast<RankedTensorType>();
    if (t.getRank() != 4 || !t.hasStaticShape() ||
        t.getElementType() != qt.getElementType())
      return rewriter.notifyMatchFailure(op, "4-d static operands of one "
                                             "dtype");
    if (t.getDimSize(1) != qt.getDimSize(1))
      return rewriter.notifyMatchFailure(op, "grouped key/value heads");
  }
  return success();
}

double scaleOf(std::optional<APFloat> given, Value q) {
  return given ? given->convertToDouble()
               : 1.0 / std::sqrt(double(
                           q.getType().cast<RankedTensorType>().getDimSize(3)));
}

struct AttentionBackward
    : OpRewritePattern<ScaledDotProductFlashAttentionForCpuBackwardOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult
  matchAndRewrite(ScaledDotProductFlashAttentionForCpuBackwardOp op,
                  PatternRewriter &rewriter) const override {
    if (op.getDropoutP().convertToDouble() != 0.0)
      return rewriter.notifyMatchFailure(op, "dropout");
    Value g = op.getGradOut(), q = op.getQuery(), k = op.getKey(),
          v = op.getValue(), o = op.getOut_();
    if (failed(plainHeads(rewriter, op, {q, k, v, g, o})))
      return failure();
    Location loc = op.getLoc();
    auto qt = q.getType().cast<RankedTensorType>();
    Type element = qt.getElementType();
    int64_t b = qt.getDimSize(0), h = qt.getDimSize(1), l = qt.getDimSize(2);
    auto scoresType = withShape(
        {b, h, l, k.getType().cast<RankedTensorType>().getDimSize(2)}, element);
    double scale = scaleOf(op.getScale(), q);
    Value p = probabilities(rewriter, loc, q, k, op.getAttnMask(),
                            op.getIsCausal(), scale);

    Value dv = matmul(rewriter, loc, transposeLast(rewriter, loc, p), g);
    Value dp = matmul(rewriter, loc, g, transposeLast(rewriter, loc, v));
    auto outType = o.getType().cast<RankedTensorType>();
    Value go = rewriter.create<AtenMulTensorOp>(loc, outType, g, o);
    Value rowsum = rewriter.create<AtenSumDimIntListOp>(
        loc, withShape({b, h, l, 1}, element), go,
        rewriter.getDenseI64ArrayAttr({3}), rewriter.getBoolAttr(true),
        TypeAttr());
    Value centered = rewriter.create<AtenSubTensorOp>(loc, scoresType, dp,
                                                      rowsum, Attribute());
    Value ds = rewriter.create<AtenMulTensorOp>(loc, scoresType, p, centered);
    Value dq = scaled(rewriter, loc, matmul(rewriter, loc, ds, k), scale);
    Value dk = scaled(rewriter, loc,
                      matmul(rewriter, loc, transposeLast(rewriter, loc, ds), q),
                      scale);
    if (dq.getType() != op.getGradQuery().getType() ||
        dk.getType() != op.getGradKey().getType() ||
        dv.getType() != op.getGradValue().getType())
      return rewriter.notifyMatchFailure(op, "result types");
    rewriter.replaceOp(op, {dq, dk, dv});
    return success();
  }
};
/// f32/f64 attention whose log-sum-exp nothing reads: P V.
struct AttentionF32 : OpRewritePattern<ScaledDotProductFlashAttentionForCpuOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ScaledDotProductFlashAttentionForCpuOp op,
                                PatternRewriter &rewriter) const override {
    if (!op->getResult(1).use_empty())
      return rewriter.notifyMatchFailure(op, "its log-sum-exp is read");
    if (op.getDropoutP() && op.getDropoutP()->convertToDouble() != 0.0)
      return rewriter.notifyMatchFailure(op, "dropout");
    Value q = op.getQuery(), k = op.getKey(), v = op.getValue();
    Type element = q.getType().cast<RankedTensorType>().getElementType();
    if (!element.isF32() && !element.isF64())
      return rewriter.notifyMatchFailure(op, "bf16/f16 (fused kernels)");
    if (failed(plainHeads(rewriter, op, {q, k, v})))
      return failure();
    Location loc = op.getLoc();
    bool causal = op.getIsCausal() && *op.getIsCausal();
    Value p = probabilities(rewriter, loc, q, k, op.getAttnMask(), causal,
                            scaleOf(op.getScale(), q));
    Value out = matmul(rewriter, loc, p, v);
    if (out.getType() != op->getResult(0).getType())
      return rewriter.notifyMatchFailure(op, "result type");
    rewriter.replaceAllUsesWith(op->getResult(0), out);
    rewriter.eraseOp(op);
    return success();
  }
};
} // namespace

void dynoc::populateAttentionF32Decomposition(RewritePatternSet &patterns) {
  patterns.add<AttentionF32>(patterns.getContext());
}

void dynoc::populateAttentionBackwardDecomposition(
    RewritePatternSet &patterns) {
  patterns.add<AttentionBackward>(patterns.getContext());
}
