//===- FoldBatchNorm.cpp - eval batch norm into the convolution before it -===//
//
// batch_norm(conv(x, W, b)) in eval mode is conv(x, W * s, (b - mean) * s +
// beta) with s = gamma / sqrt(var + eps) per output channel. The rewrite
// leaves the new weight and bias as ops on the weights (O(weights) work)
// instead of a pass over the activations. A bf16/f16 convolution whose
// output is widened to f32 for the norm folds too: the new weight and bias
// are computed in f32 and rounded to the convolution's type.
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

bool isReduced(Type t) {
  auto rt = t.dyn_cast<RankedTensorType>();
  return rt && (rt.getElementType().isBF16() || rt.getElementType().isF16());
}

Type elementType(Type t) { return t.cast<ShapedType>().getElementType(); }

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
    // A bf16/f16 convolution reaches an f32 batch norm through the widening
    // conversion dynoc-widen-reduced-precision put between them.
    Value input = bn->getOperand(0);
    Operation *widen = input.getDefiningOp();
    if (widen && widen->getName().getStringRef() == "aten._to_copy" &&
        widen->getNumOperands() == 1 && input.hasOneUse() &&
        isReduced(widen->getOperand(0).getType()) &&
        elementType(input.getType()).isF32())
      input = widen->getOperand(0);
    else
      widen = nullptr;
    auto conv = input.getDefiningOp<AtenConvolutionOp>();
    if (!conv || conv.getTransposed() || !input.hasOneUse())
      return rewriter.notifyMatchFailure(bn, "not fed by a lone convolution");
    auto epsAttr = bn->getAttrOfType<FloatAttr>("eps");
    Value weight = conv->getOperand(1);
    auto wType = weight.getType().dyn_cast<RankedTensorType>();
    auto vecType = bn->getOperand(1).getType().dyn_cast<RankedTensorType>();
    if (!epsAttr || !wType || !vecType ||
        !(widen ? isReduced(wType) : wType.getElementType().isF32()) ||
        !vecType.getElementType().isF32() || vecType.getRank() != 1 ||
        wType.isDynamicDim(0) || vecType.getDimSize(0) != wType.getDimSize(0))
      return rewriter.notifyMatchFailure(bn, "channel counts do not agree");

    Location loc = bn->getLoc();
    // In bf16/f16 the new weight and bias are computed in f32 from the
    // widened weight and bias, and rounded once (the folded convolution
    // differs from conv-then-norm by that rounding, as the norm's own output
    // rounding does).
    Type reduced = wType.getElementType();
    RankedTensorType wideW = RankedTensorType::get(
        wType.getShape(), rewriter.getF32Type(), wType.getEncoding());
    // At the norm: its statistics may be computed after the convolution (a
    // bf16 graph widens them there).
    rewriter.setInsertionPoint(bn);
    auto widened = [&](Value v) {
      return widen ? dynoc::convertElementType(rewriter, loc, v, rewriter.getF32Type()) : v;
    };
    auto narrowed = [&](Value v) {
      return widen ? dynoc::convertElementType(rewriter, loc, v, reduced) : v;
    };
    Value gamma = bn->getOperand(1), beta = bn->getOperand(2),
          mean = bn->getOperand(3), var = bn->getOperand(4);
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
    Value newWeight = narrowed(build(rewriter, loc, "aten.mul.Tensor", wideW,
                                     {widened(weight), scaleColumn}));
    // b' = (b - mean) * s + beta, or beta - mean * s without a bias
    Value newBias;
    if (conv->getNumOperands() == 3) {
      Value centered = build(rewriter, loc, "aten.sub.Tensor", vecType,
                             {widened(conv->getOperand(2)), mean});
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
    state.addOperands({conv->getOperand(0), newWeight, narrowed(newBias)});
    state.addTypes(conv->getResult(0).getType());
    state.addAttributes(conv->getAttrs());
    Operation *folded = rewriter.create(state);
    // The batch norm's f32 result is now the folded convolution's, widened.
    Value result = folded->getResult(0);
    if (widen)
      result = dynoc::convertElementType(rewriter, loc, result, rewriter.getF32Type());
    rewriter.replaceAllUsesWith(bn->getResult(0), result);
    rewriter.eraseOp(bn);
    if (widen)
      rewriter.eraseOp(widen);
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
