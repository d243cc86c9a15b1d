//===- MatmulDecompositions.cpp - composite matmul ops -> bmm + pointwise -===//
//
// baddbmm(self, b1, b2, beta, alpha) = beta * self + alpha * bmm(b1, b2), as
// ATen defines it (beta = 0 ignores self, NaNs included). Bloom's attention
// records it (an ALiBi bias plus the scaled scores); the backends build bmm
// and fuse the scaling and the add into one elementwise pass.
//
//===----------------------------------------------------------------------===//
#include "dynoc/IR/AtenDialect.h"
#include "dynoc/Passes/Passes.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace dynoc::aten;

namespace {
/// A Scalar attribute's value; 1 when absent (ATen's default).
std::optional<double> scalarOr1(Attribute a) {
  if (!a)
    return 1.0;
  if (auto f = a.dyn_cast<FloatAttr>())
    return f.getValueAsDouble();
  if (auto i = a.dyn_cast<IntegerAttr>())
    return double(i.getInt());
  return std::nullopt;
}

struct Baddbmm : OpRewritePattern<AtenBaddbmmOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AtenBaddbmmOp op,
                                PatternRewriter &rewriter) const override {
    std::optional<double> beta = scalarOr1(op.getBetaAttr()),
                          alpha = scalarOr1(op.getAlphaAttr());
    if (!beta || !alpha)
      return rewriter.notifyMatchFailure(op, "beta or alpha is not a number");
    auto b1 = op.getBatch1().getType().cast<RankedTensorType>();
    auto b2 = op.getBatch2().getType().cast<RankedTensorType>();
    auto resultType = op.getType().cast<RankedTensorType>();
    if (b1.getRank() != 3 || b2.getRank() != 3 || resultType.getRank() != 3)
      return rewriter.notifyMatchFailure(op, "batches of matrices expected");
    Location loc = op.getLoc();
    Value product = rewriter.create<AtenBmmOp>(
        loc,
        RankedTensorType::get(
            {b1.getDimSize(0), b1.getDimSize(1), b2.getDimSize(2)},
            resultType.getElementType()),
        op.getBatch1(), op.getBatch2());
    if (*alpha != 1.0)
      product = rewriter.create<AtenMulScalarOp>(loc, product.getType(),
                                                 product, op.getAlphaAttr());
    if (*beta == 0.0) { // self is not read
      rewriter.replaceOp(op, product);
      return success();
    }
    Value self = op.getSelf();
    if (*beta != 1.0)
      self = rewriter.create<AtenMulScalarOp>(loc, self.getType(), self,
                                              op.getBetaAttr());
    rewriter.replaceOpWithNewOp<AtenAddTensorOp>(op, resultType, self, product,
                                                 Attribute());
    return success();
  }
};
} // namespace

void dynoc::populateMatmulDecompositions(RewritePatternSet &patterns) {
  patterns.add<Baddbmm>(patterns.getContext());
}
