//===- WidenReducedPrecision.cpp - narrow types compute wider -------------===//
//
// The CPU backend stores bf16 and f16 tensors but computes in f32, as ATen's
// CPU kernels do for these types: each op that computes (anything but data
// movement, see OpClasses.h) reads its bf16/f16 operands through a conversion
// to f32, computes in f32, and its result converts back, so every op's result
// is rounded to the reduced type exactly once, as in eager mode. 8- and
// 16-bit integers (int8, int16, uint8) compute in i32 the same way: addition,
// multiplication and the bitwise ops are the same modulo 2^8 or 2^16 either
// way, so converting the result back gives what eager's wrapping gives.
//
//===----------------------------------------------------------------------===//
#include "dynoc/IR/OpClasses.h"
#include "dynoc/Passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/Pass/Pass.h"
#include "llvm/ADT/StringSet.h"

namespace dynoc {
#define GEN_PASS_DEF_WIDENREDUCEDPRECISION
#include "dynoc/Passes/Passes.h.inc"
} // namespace dynoc

using namespace mlir;

namespace {

/// The type an op computes in instead of `t`'s element type: f32 for bf16
/// and f16 (unless the op computes in them itself, `keepFloats`), i32 for 8-
/// and 16-bit integers (their arithmetic wraps the same once the result
/// converts back), or null where `t` stays.
Type widened(Type t, bool keepFloats) {
  auto rt = t.dyn_cast<RankedTensorType>();
  if (!rt)
    return {};
  Type e = rt.getElementType();
  if ((e.isBF16() || e.isF16()) && !keepFloats)
    return Float32Type::get(t.getContext());
  if (e.isSignlessInteger(8) || e.isSignlessInteger(16) ||
      e.isUnsignedInteger(8))
    return IntegerType::get(t.getContext(), 32);
  return {};
}

RankedTensorType withElementType(Type t, Type element) {
  auto rt = t.cast<RankedTensorType>();
  return RankedTensorType::get(rt.getShape(), element, rt.getEncoding());
}

struct WidenReducedPrecisionPass
    : dynoc::impl::WidenReducedPrecisionBase<WidenReducedPrecisionPass> {
  using Base::Base;
  void runOnOperation() override {
    llvm::StringSet<> keep;
    for (const std::string &n : keepOps)
      keep.insert(n);
    SmallVector<std::pair<Operation *, bool>> ops; // and whether it is kept
    getOperation().walk([&](Operation *op) {
      if (op->getName().getDialectNamespace() != "aten" ||
          dynoc::isDataMovementOp(op))
        return;
      bool kept = keep.contains(op->getName().getStringRef());
      auto narrow = [&](Type t) { return bool(widened(t, kept)); };
      if (llvm::any_of(op->getOperandTypes(), narrow) ||
          llvm::any_of(op->getResultTypes(), narrow))
        ops.push_back({op, kept});
    });
    for (auto [op, kept] : ops) {
      OpBuilder b(op);
      for (OpOperand &use : op->getOpOperands())
        if (Type wide = widened(use.get().getType(), kept))
          use.set(dynoc::convertElementType(b, op->getLoc(), use.get(), wide));
      b.setInsertionPointAfter(op);
      for (Value r : op->getResults()) {
        Type wide = widened(r.getType(), kept);
        if (!wide)
          continue;
        Type reduced = r.getType().cast<RankedTensorType>().getElementType();
        r.setType(withElementType(r.getType(), wide));
        Value narrowed = dynoc::convertElementType(b, op->getLoc(), r, reduced);
        r.replaceAllUsesExcept(narrowed, narrowed.getDefiningOp());
      }
    }
  }
};
} // namespace

std::unique_ptr<Pass> dynoc::createWidenReducedPrecisionPass() {
  return std::make_unique<WidenReducedPrecisionPass>();
}

std::unique_ptr<Pass>
dynoc::createWidenReducedPrecisionPass(ArrayRef<std::string> keepOps) {
  dynoc::WidenReducedPrecisionOptions options;
  options.keepOps = keepOps; // copied into the pass's option
  return std::make_unique<WidenReducedPrecisionPass>(options);
}
