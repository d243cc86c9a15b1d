//===- InferShapes.cpp - shapes and dtypes, static and symbolic -----------===//
//
// Gives every dynamic input dim a symbol (s0, s1, ... in argument order) and
// pushes shapes through the graph with the shape functions: a result dim the
// type left `?` that the operands fix is made static; a result whose type
// contradicts its operands (a static dim or a dtype) is an error at the op; a
// result with dims that stay symbolic is annotated with them, so `?` dims
// carry how they relate to the inputs. Dims no rule can express (a
// data-dependent size, an op without a shape function) get a fresh symbol.
//
//===----------------------------------------------------------------------===//
#include "dynoc/IR/GraphAttrs.h"
#include "dynoc/Passes/Passes.h"
#include "dynoc/Passes/ShapeFunctions.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Pass/Pass.h"
#include "llvm/ADT/DenseMap.h"

namespace dynoc {
#define GEN_PASS_DEF_INFERSHAPES
#include "dynoc/Passes/Passes.h.inc"
} // namespace dynoc

using namespace mlir;
using dynoc::SymbolicShape;

namespace {

std::string typeText(Type t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  t.print(os);
  return os.str();
}

std::string shapeText(const SymbolicShape &s) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "[";
  for (auto [k, d] : llvm::enumerate(s)) {
    os << (k ? ", " : "");
    if (d)
      d.print(os);
    else
      os << "?";
  }
  os << "]";
  return os.str();
}

struct InferShapesPass : dynoc::impl::InferShapesBase<InferShapesPass> {
  void runOnOperation() override {
    func::FuncOp f = getOperation();
    if (f.isExternal())
      return;
    ctx = f.getContext();
    symbols.clear();
    shapes.clear();
    Block &body = f.getBody().front();
    auto inputs = f->getAttrOfType<ArrayAttr>(dynoc::attrs::kInputs);
    for (BlockArgument arg : body.getArguments()) {
      std::string name = "arg" + std::to_string(arg.getArgNumber());
      if (inputs && arg.getArgNumber() < inputs.size())
        if (auto dict = inputs[arg.getArgNumber()].dyn_cast<DictionaryAttr>())
          if (auto n = dict.getAs<StringAttr>("name"))
            name = n.str();
      auto type = arg.getType().dyn_cast<RankedTensorType>();
      if (!type)
        continue;
      SymbolicShape s;
      for (auto [d, size] : llvm::enumerate(type.getShape()))
        s.push_back(ShapedType::isDynamic(size)
                        ? fresh(name + ".size(" + std::to_string(d) + ")")
                        : getAffineConstantExpr(size, ctx));
      shapes[arg] = s;
    }
    bool refined = false;
    SmallVector<std::pair<Operation *, SmallVector<SymbolicShape>>> symbolic;
    for (Operation &op : body.without_terminator()) {
      SmallVector<SymbolicShape> operandShapes;
      bool allKnown = true;
      for (Value v : op.getOperands()) {
        auto it = shapes.find(v);
        allKnown &= it != shapes.end();
        operandShapes.push_back(it != shapes.end() ? it->second
                                                   : SymbolicShape());
      }
      SmallVector<SymbolicShape> inferred;
      if (allKnown && dynoc::hasShapeFunction(&op) &&
          failed(dynoc::inferResultShapes(&op, operandShapes, inferred)))
        return signalPassFailure();
      SmallVector<SymbolicShape> results;
      bool anySymbolic = false;
      for (auto [k, r] : llvm::enumerate(op.getResults())) {
        auto type = r.getType().dyn_cast<RankedTensorType>();
        if (!type)
          continue;
        // A result nothing reads may carry a placeholder type (an op's
        // statistics or indices the graph drops): only its users rely on it.
        bool used = !r.use_empty();
        FailureOr<SymbolicShape> s = settle(
            &op, k, type, used && k < inferred.size() ? &inferred[k] : nullptr);
        if (failed(s) || (used && failed(checkElementType(&op, k, type))))
          return signalPassFailure();
        auto newType = refine(type, *s);
        if (newType != type) {
          r.setType(newType);
          refined = true;
        }
        anySymbolic |= llvm::any_of(
            *s, [](AffineExpr e) { return !e.isa<AffineConstantExpr>(); });
        shapes[r] = *s;
        results.push_back(*s);
      }
      if (anySymbolic)
        symbolic.push_back({&op, results});
    }
    // Annotate once every symbol exists, so each map has them all.
    Builder b(ctx);
    for (auto &[op, results] : symbolic) {
      SmallVector<Attribute> maps;
      for (const SymbolicShape &s : results)
        maps.push_back(
            AffineMapAttr::get(AffineMap::get(0, symbols.size(), s, ctx)));
      op->setAttr(dynoc::attrs::kShapes, b.getArrayAttr(maps));
    }
    if (!symbols.empty()) {
      SmallVector<Attribute> names;
      for (const std::string &s : symbols)
        names.push_back(b.getStringAttr(s));
      f->setAttr(dynoc::attrs::kDimSymbols, b.getArrayAttr(names));
    }
    if (refined)
      f.setType(FunctionType::get(ctx, f.getArgumentTypes(),
                                  body.getTerminator()->getOperandTypes()));
  }

  /// A new symbol, described by `what` in the function's symbol list.
  AffineExpr fresh(std::string what) {
    symbols.push_back(std::move(what));
    return getAffineSymbolExpr(symbols.size() - 1, ctx);
  }

  /// The dims of result `k` of `op`: the rule's where it has one, checked
  /// against the static dims of the type, which win where the rule's dim is
  /// symbolic (the type is a promise the generated code checks at run time).
  FailureOr<SymbolicShape> settle(Operation *op, unsigned k,
                                  RankedTensorType type,
                                  const SymbolicShape *rule) {
    if (rule && rule->size() != (size_t)type.getRank())
      return op->emitError() << "result " << k << " has type " << typeText(type)
                             << ", but its operands give rank " << rule->size()
                             << " " << shapeText(*rule);
    SymbolicShape s;
    for (auto [d, size] : llvm::enumerate(type.getShape())) {
      AffineExpr e = rule ? (*rule)[d] : AffineExpr();
      auto c = e.dyn_cast_or_null<AffineConstantExpr>();
      if (!ShapedType::isDynamic(size)) {
        if (c && c.getValue() != size)
          return op->emitError()
                 << "result " << k << " has type " << typeText(type)
                 << ", but its operands give shape " << shapeText(*rule);
        s.push_back(getAffineConstantExpr(size, ctx));
        continue;
      }
      s.push_back(e ? e
                    : fresh(op->getName().getStringRef().str() + " result " +
                            std::to_string(k) + " dim " + std::to_string(d)));
    }
    return s;
  }

  LogicalResult checkElementType(Operation *op, unsigned k,
                                 RankedTensorType type) {
    Type want = dynoc::inferResultElementType(op, k);
    if (!want || want == type.getElementType())
      return success();
    return op->emitError() << "result " << k << " has type " << typeText(type)
                           << ", but its operands and attributes give "
                              "element type "
                           << typeText(want);
  }

  RankedTensorType refine(RankedTensorType type, const SymbolicShape &s) {
    SmallVector<int64_t> dims(type.getShape());
    for (auto [d, e] : llvm::enumerate(s))
      if (auto c = e.dyn_cast<AffineConstantExpr>())
        dims[d] = c.getValue();
    return RankedTensorType::get(dims, type.getElementType(),
                                 type.getEncoding());
  }

  MLIRContext *ctx = nullptr;
  std::vector<std::string> symbols;
  llvm::DenseMap<Value, SymbolicShape> shapes;
};
} // namespace

std::unique_ptr<Pass> dynoc::createInferShapesPass() {
  return std::make_unique<InferShapesPass>();
}
