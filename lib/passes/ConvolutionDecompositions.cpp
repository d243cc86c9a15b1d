//===- ConvolutionDecompositions.cpp - 1-D convolutions as 2-D ones -------===//
//
// A 1-D convolution (Conv1d, ConvTranspose1d: input [N, C, L], weight
// [O, C/groups, K]) is the 2-D one over [N, C, 1, L] with a [O, C/groups, 1, K]
// weight, a height of one, stride/dilation 1 and padding 0 along it. Both
// backends build 2-D convolutions (oneDNN on the CPU, cuDNN on CUDA), so the
// 1-D ones SqueezeBERT's pointwise layers and wav2vec2's feature encoder use
// become those, between an unsqueeze and a squeeze of dim 2.
//
//===----------------------------------------------------------------------===//
#include "dynoc/IR/AtenDialect.h"
#include "dynoc/Passes/Passes.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace dynoc::aten;

namespace {
/// `v`'s type with a dim of size one inserted at index 2.
RankedTensorType withUnitDim2(Value v) {
  auto t = v.getType().cast<RankedTensorType>();
  SmallVector<int64_t> shape(t.getShape());
  shape.insert(shape.begin() + 2, 1);
  return RankedTensorType::get(shape, t.getElementType());
}

struct Convolution1dAs2d : OpRewritePattern<AtenConvolutionOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AtenConvolutionOp op,
                                PatternRewriter &rewriter) const override {
    auto input = op.getInput().getType().cast<RankedTensorType>();
    auto weight = op.getWeight().getType().cast<RankedTensorType>();
    if (input.getRank() != 3 || weight.getRank() != 3 ||
        op.getStride().size() != 1 || op.getPadding().size() != 1 ||
        op.getDilation().size() != 1 || op.getOutputPadding().size() > 1)
      return rewriter.notifyMatchFailure(op, "not a 1-D convolution");
    Location loc = op.getLoc();
    auto unsqueeze = [&](Value v) -> Value {
      return rewriter.create<AtenUnsqueezeOp>(loc, withUnitDim2(v), v,
                                              rewriter.getI64IntegerAttr(2));
    };
    // (height, width) pairs: the height of one takes the neutral value.
    auto pair = [&](ArrayRef<int64_t> widthValue, int64_t heightValue) {
      int64_t w = widthValue.empty() ? heightValue : widthValue[0];
      return rewriter.getDenseI64ArrayAttr({heightValue, w});
    };
    Value input2d = unsqueeze(op.getInput());
    Value weight2d = unsqueeze(op.getWeight());
    Value conv = rewriter.create<AtenConvolutionOp>(
        loc, withUnitDim2(op.getResult()), input2d, weight2d, op.getBias(),
        pair(op.getStride(), 1), pair(op.getPadding(), 0),
        pair(op.getDilation(), 1), op.getTransposedAttr(),
        pair(op.getOutputPadding(), 0), op.getGroupsAttr());
    rewriter.replaceOpWithNewOp<AtenSqueezeDimOp>(
        op, op.getType(), conv, rewriter.getI64IntegerAttr(2));
    return success();
  }
};
} // namespace

void dynoc::populateConvolutionDecompositions(RewritePatternSet &patterns) {
  patterns.add<Convolution1dAs2d>(patterns.getContext());
}
