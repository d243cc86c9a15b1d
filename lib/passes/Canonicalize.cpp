//===- Canonicalize.cpp - aten ops that do nothing, or undo each other ----===//
//
// Graph values are immutable (capture records in-place ops functionally), so
// a copy is its operand, a reshape to the operand's own type is the operand,
// a reshape of a reshape reads the first one's operand, and ops that undo
// each other (t(t(x)), neg(neg(x))) or scale by one vanish; attention reads
// grouped-query key/value heads unrepeated. Applied greedily;
// the generated op classes carry no folders, so the patterns match by name.
//
//===----------------------------------------------------------------------===//
#include "dynoc/Passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/StringSet.h"

namespace dynoc {
#define GEN_PASS_DEF_CANONICALIZE
#include "dynoc/Passes/Passes.h.inc"
} // namespace dynoc

using namespace mlir;

namespace {

bool named(Operation *op, std::initializer_list<StringRef> names) {
  return llvm::is_contained(names, op->getName().getStringRef());
}

bool isReshape(Operation *op) {
  return named(op, {"aten.view", "aten._unsafe_view", "aten.reshape"});
}

double numberAttr(Operation *op, StringRef name, double dflt) {
  Attribute a = op->getAttr(name);
  if (auto i = a.dyn_cast_or_null<IntegerAttr>())
    return double(i.getInt());
  if (auto f = a.dyn_cast_or_null<FloatAttr>())
    return f.getValueAsDouble();
  return dflt;
}

/// Replaces `op` by its first operand when their types agree.
LogicalResult forwardOperand(Operation *op, PatternRewriter &rewriter) {
  if (op->getNumResults() != 1 || op->getNumOperands() < 1 ||
      op->getOperand(0).getType() != op->getResult(0).getType())
    return failure();
  rewriter.replaceOp(op, op->getOperand(0));
  return success();
}

/// Whether converting `from` to `to` keeps every value: bf16 or f16 to f32.
bool widensExactly(Type from, Type to) {
  auto f = from.dyn_cast<RankedTensorType>(), t = to.dyn_cast<RankedTensorType>();
  return f && t && (f.getElementType().isBF16() || f.getElementType().isF16()) &&
         t.getElementType().isF32();
}

/// The key/value heads `v` repeats for grouped-query attention
/// (transformers' repeat_kv: x[:, :, None].expand(b, hk, n, s, d), made
/// contiguous, reshaped to (b, hk * n, s, d)), or null. Head j of `v` is head
/// j / n of the result: the attention kernels' reading of key/value heads in
/// groups of query heads.
Value unrepeatedHeads(Value v) {
  Operation *reshape = v.getDefiningOp();
  if (!reshape || !isReshape(reshape))
    return {};
  Operation *expand = reshape->getOperand(0).getDefiningOp();
  while (expand && named(expand, {"aten.clone", "aten.contiguous"}))
    expand = expand->getOperand(0).getDefiningOp();
  if (!expand || !named(expand, {"aten.expand"}))
    return {};
  Operation *unsqueeze = expand->getOperand(0).getDefiningOp();
  auto dim = unsqueeze ? unsqueeze->getAttrOfType<IntegerAttr>("dim") : nullptr;
  if (!unsqueeze || !named(unsqueeze, {"aten.unsqueeze"}) || !dim ||
      (dim.getInt() != 2 && dim.getInt() != -3))
    return {};
  Value heads = unsqueeze->getOperand(0);
  auto x = heads.getType().dyn_cast<RankedTensorType>();
  auto e = expand->getResult(0).getType().dyn_cast<RankedTensorType>();
  auto r = v.getType().dyn_cast<RankedTensorType>();
  if (!x || !e || !r || x.getRank() != 4 || e.getRank() != 5 ||
      r.getRank() != 4 || x.getElementType() != r.getElementType())
    return {};
  const int64_t hk = x.getDimSize(1), n = e.getDimSize(2);
  if (ShapedType::isDynamic(hk) || ShapedType::isDynamic(n) ||
      e.getDimSize(1) != hk || r.getDimSize(1) != hk * n)
    return {};
  for (int d : {0, 2, 3})
    if (r.getDimSize(d) != x.getDimSize(d) ||
        e.getDimSize(d == 0 ? 0 : d + 1) != x.getDimSize(d))
      return {};
  return heads;
}

struct Canonicalize : RewritePattern {
  Canonicalize(MLIRContext *ctx)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/1, ctx) {}

  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rewriter) const override {
    // Copies of an immutable value.
    if (named(op, {"aten.clone", "aten.contiguous", "aten.alias", "aten.detach",
                   "aten.lift_fresh", "aten.lift_fresh_copy"}))
      return forwardOperand(op, rewriter);
    if (named(op, {"aten.dropout"}) && numberAttr(op, "train", 0) == 0)
      return forwardOperand(op, rewriter);
    // A dtype conversion to the same dtype on the same device.
    if (named(op, {"aten._to_copy"}) && op->getNumOperands() == 1) {
      auto device = op->getAttrOfType<StringAttr>("device");
      if ((!device || device.getValue() == "cpu") &&
          succeeded(forwardOperand(op, rewriter)))
        return success();
      // Back to a float type that an exact widening came from (bf16 -> f32
      // -> bf16): the value itself.
      Operation *inner = op->getOperand(0).getDefiningOp();
      if (!device && inner && named(inner, {"aten._to_copy"}) &&
          inner->getNumOperands() == 1 && !inner->getAttr("device") &&
          inner->getOperand(0).getType() == op->getResult(0).getType() &&
          widensExactly(inner->getOperand(0).getType(),
                        inner->getResult(0).getType())) {
        rewriter.replaceOp(op, inner->getOperand(0));
        return success();
      }
    }
    // Shape changes to the shape it has.
    if (isReshape(op) || named(op, {"aten.expand", "aten.flatten.using_ints",
                                    "aten.unsqueeze", "aten.squeeze.dim"})) {
      auto type = op->getResult(0).getType().dyn_cast<RankedTensorType>();
      if (type && type.hasStaticShape() &&
          succeeded(forwardOperand(op, rewriter)))
        return success();
    }
    // A reshape of a reshape reads the first one's operand.
    if (isReshape(op)) {
      Operation *inner = op->getOperand(0).getDefiningOp();
      if (inner && isReshape(inner)) {
        rewriter.updateRootInPlace(
            op, [&] { op->setOperand(0, inner->getOperand(0)); });
        return success();
      }
    }
    // Ops that undo each other.
    if (named(op, {"aten.t", "aten.neg"})) {
      Operation *inner = op->getOperand(0).getDefiningOp();
      if (inner && inner->getName() == op->getName() &&
          inner->getOperand(0).getType() == op->getResult(0).getType()) {
        rewriter.replaceOp(op, inner->getOperand(0));
        return success();
      }
    }
    if (named(op, {"aten.transpose.int"})) {
      Operation *inner = op->getOperand(0).getDefiningOp();
      auto dims = [](Operation *o) {
        auto a = o->getAttrOfType<IntegerAttr>("dim0"),
             b = o->getAttrOfType<IntegerAttr>("dim1");
        int64_t rank =
            o->getOperand(0).getType().cast<RankedTensorType>().getRank();
        auto norm = [&](IntegerAttr d) {
          return d ? (d.getInt() + rank) % std::max<int64_t>(rank, 1) : -1;
        };
        int64_t x = norm(a), y = norm(b);
        return std::make_pair(std::min(x, y), std::max(x, y));
      };
      if (inner && inner->getName() == op->getName() &&
          dims(inner) == dims(op) &&
          inner->getOperand(0).getType() == op->getResult(0).getType()) {
        rewriter.replaceOp(op, inner->getOperand(0));
        return success();
      }
    }
    // Attention over repeated key/value heads reads the heads themselves
    // (grouped-query attention: no copy of each head per query head).
    if (named(op, {"aten._scaled_dot_product_flash_attention_for_cpu"}) &&
        op->getNumOperands() >= 3) {
      bool changed = false;
      for (unsigned i : {1u, 2u})
        if (Value heads = unrepeatedHeads(op->getOperand(i))) {
          rewriter.updateRootInPlace(op, [&] { op->setOperand(i, heads); });
          changed = true;
        }
      if (changed)
        return success();
    }
    // Arithmetic with its identity.
    if ((named(op, {"aten.mul.Scalar", "aten.div.Scalar"}) &&
         numberAttr(op, "other", 0) == 1) ||
        (named(op, {"aten.add.Scalar", "aten.sub.Scalar"}) &&
         numberAttr(op, "other", 1) == 0) ||
        (named(op, {"aten.pow.Tensor_Scalar"}) &&
         numberAttr(op, "exponent", 0) == 1))
      return forwardOperand(op, rewriter);
    return failure();
  }
};

struct CanonicalizePass : dynoc::impl::CanonicalizeBase<CanonicalizePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<Canonicalize>(&getContext());
    // Ops left without users are dead (every aten op here is pure).
    if (failed(dynoc::applyPatternsOrReport(getOperation(), std::move(patterns),
                                            "dynoc-canonicalize")))
      signalPassFailure();
  }
};
} // namespace

std::unique_ptr<Pass> dynoc::createCanonicalizePass() {
  return std::make_unique<CanonicalizePass>();
}
