//===- Fusion.cpp - grouping ops into dynoc.fusion_group ------------------===//
//
// Walks each graph in order and grows a chain from every unfused GEMM,
// convolution or elementwise op through its single-use elementwise consumers
// of the same shape. A chain of two or more ops becomes one
// dynoc.fusion_group, placed where the chain's last op was: every value the
// chain reads from outside is defined before that point, and the chain's
// inner values have no other users. Elementwise ops compute in f32; the
// conversions between f32 and bf16/f16 that dynoc-widen-reduced-precision
// puts around them fuse too, so a bf16 graph's pointwise work reads and
// writes bf16 in one loop, and a chain reads a bf16 input that it adds in f32
// (a residual) through its conversion, in the loop; more generally a chain
// takes in the elementwise ops that produce its operands and feed nothing
// else (absorbProducers), so a tree of them is one loop. A GEMM's chain ends
// at a value of the GEMM's own type, which the GEMM writes in place.
//
//===----------------------------------------------------------------------===//
#include "dynoc/IR/AtenDialect.h"
#include "dynoc/Passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Pass/Pass.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringSet.h"

namespace dynoc {
#define GEN_PASS_DEF_FUSION
#include "dynoc/Passes/Passes.h.inc"
} // namespace dynoc

using namespace mlir;

namespace {
bool isAnchor(Operation *op) {
  static const llvm::StringSet<> names = {"aten.convolution", "aten.addmm",
                                          "aten.mm", "aten.linear", "aten.bmm"};
  return names.contains(op->getName().getStringRef());
}

bool isFloat(Type t) {
  auto rt = t.dyn_cast<RankedTensorType>();
  return rt && (rt.getElementType().isF32() || rt.getElementType().isBF16() ||
                rt.getElementType().isF16());
}

bool isElementwise(Operation *op) {
  static const llvm::StringSet<> names = {
      "aten.relu",       "aten.neg",        "aten.abs",
      "aten.sqrt",       "aten.rsqrt",      "aten.add.Tensor",
      "aten.sub.Tensor", "aten.mul.Tensor", "aten.div.Tensor",
      "aten.maximum",    "aten.minimum",    "aten.add.Scalar",
      "aten.sub.Scalar", "aten.mul.Scalar", "aten.div.Scalar",
      "aten.hardtanh",   "aten.reciprocal", "aten.pow.Scalar"};
  // Fused loops compute in float: an int64 result stays alone.
  if (op->getNumResults() == 0)
    return false;
  if (op->getName().getStringRef() == "aten._to_copy")
    return op->getNumOperands() == 1 && isFloat(op->getOperand(0).getType()) &&
           isFloat(op->getResult(0).getType());
  auto rt = op->getResult(0).getType().dyn_cast<RankedTensorType>();
  if (!rt || !rt.getElementType().isF32())
    return false;
  StringRef n = op->getName().getStringRef();
  if (names.contains(n))
    return !(n == "aten.div.Tensor" && op->getAttr("rounding_mode"));
  // Eval-mode batch norm whose statistics outputs are unused.
  bool bn = isa<dynoc::aten::AtenNativeBatchNormOp>(op)
                ? !cast<dynoc::aten::AtenNativeBatchNormOp>(op).getTraining()
                : isa<dynoc::aten::NativeBatchNormLegitNoTrainingOp>(op);
  return bn && op->getResult(1).use_empty() && op->getResult(2).use_empty();
}

bool sameShape(Type a, Type b) {
  return a.cast<ShapedType>().getShape() == b.cast<ShapedType>().getShape();
}

/// The next op of a chain ending in `op`: its value's only user (x * x uses
/// it twice), if that is an elementwise op with a result of the same shape in
/// the same block.
Operation *nextInChain(Operation *op) {
  Value v = op->getResult(0);
  if (v.use_empty())
    return nullptr;
  Operation *user = *v.getUsers().begin();
  if (llvm::any_of(v.getUsers(), [&](Operation *u) { return u != user; }))
    return nullptr;
  if (user->getBlock() != op->getBlock() || !isElementwise(user) ||
      !sameShape(user->getResult(0).getType(), v.getType()))
    return nullptr;
  // Only batch norm's data operand may be the chained value.
  if (user->getNumResults() > 1 && user->getOperand(0) != v)
    return nullptr;
  return user;
}

void fuse(ArrayRef<Operation *> chain) {
  llvm::SmallPtrSet<Operation *, 8> inChain(chain.begin(), chain.end());
  llvm::SetVector<Value> inputs;
  for (Operation *op : chain)
    for (Value v : op->getOperands())
      if (!inChain.contains(v.getDefiningOp()))
        inputs.insert(v);
  Operation *last = chain.back();
  OpBuilder b(last);
  auto group = b.create<dynoc::FusionGroupOp>(
      last->getLoc(), last->getResult(0).getType(), inputs.getArrayRef(),
      b.getStringAttr(isAnchor(chain.front()) ? "epilogue" : "elementwise"));
  Block *body = b.createBlock(&group.getBody());
  IRMapping map;
  for (Value v : inputs)
    map.map(v, body->addArgument(v.getType(), v.getLoc()));
  for (Operation *op : chain)
    b.clone(*op, map);
  b.create<dynoc::YieldOp>(last->getLoc(), map.lookup(last->getResult(0)));
  last->getResult(0).replaceAllUsesWith(group.getResult());
  for (Operation *op : llvm::reverse(chain))
    op->erase();
}

/// Pulls into the chain the producers of its ops' operands that feed
/// nothing else: an elementwise op (a float conversion included) whose
/// result, of its user's shape, only a chain op reads (after the anchor, in a
/// GEMM's chain), and in turn such producers of its own operands. The chain
/// then computes a tree of elementwise ops in one loop: Adam's second moment
/// (v * b2 + g * g * (1 - b2), where the walk in program order makes a chain
/// of the first product and the sum) and a bf16 residual's widening (read
/// narrow in the loop, not as a converted copy made by a pass of its own).
/// Values with users outside the chain still end it.
void absorbProducers(std::vector<Operation *> &chain,
                     llvm::SmallPtrSetImpl<Operation *> &taken) {
  const size_t first = isAnchor(chain.front()) ? 1 : 0;
  std::vector<Operation *> work(chain.begin() + first, chain.end());
  bool grew = false;
  while (!work.empty()) {
    Operation *user = work.back();
    work.pop_back();
    for (Value v : user->getOperands()) {
      Operation *def = v.getDefiningOp();
      if (!def || taken.contains(def) || def->getNumResults() != 1 ||
          def->getBlock() != user->getBlock() || !isElementwise(def) ||
          def->getParentOfType<dynoc::FusionGroupOp>() ||
          !llvm::all_of(v.getUsers(),
                        [&](Operation *u) { return u == user; }) ||
          !sameShape(v.getType(), user->getResult(0).getType()))
        continue;
      taken.insert(def);
      chain.push_back(def);
      work.push_back(def);
      grew = true;
    }
  }
  if (!grew)
    return;
  // Program order is an order of the tree's dependencies; a GEMM or
  // convolution anchor, which no absorbed op reads, stays first.
  std::sort(chain.begin() + first, chain.end(),
            [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
}

struct FusionPass : dynoc::impl::FusionBase<FusionPass> {
  void runOnOperation() override {
    std::vector<std::vector<Operation *>> chains;
    llvm::SmallPtrSet<Operation *, 32> taken;
    getOperation().walk([&](Operation *op) {
      if (taken.contains(op) || !(isAnchor(op) || isElementwise(op)) ||
          op->getParentOfType<dynoc::FusionGroupOp>())
        return;
      // An op joins one chain only: the first (in program order) to reach it.
      std::vector<Operation *> chain = {op};
      while (Operation *next = nextInChain(chain.back())) {
        if (taken.contains(next))
          break;
        chain.push_back(next);
      }
      // The GEMM writes the group's result in place: its chain ends at a
      // value of its type.
      if (isAnchor(op))
        while (chain.size() > 1 && chain.back()->getResult(0).getType() !=
                                       op->getResult(0).getType())
          chain.pop_back();
      if (chain.size() < 2)
        return;
      taken.insert(chain.begin(), chain.end());
      absorbProducers(chain, taken);
      chains.push_back(std::move(chain));
    });
    for (auto &chain : chains)
      fuse(chain);
  }
};
} // namespace

std::unique_ptr<Pass> dynoc::createFusionPass() {
  return std::make_unique<FusionPass>();
}
