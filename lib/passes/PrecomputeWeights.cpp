//===- PrecomputeWeights.cpp - ops on weights alone move to load time -----===//
//
// An op whose operands all come from the weights (parameters, buffers,
// constants) computes the same value on every call. This pass moves such ops
// into a second function, `<graph>__prepare`, which the runtime runs once when
// it loads the model; the graph takes their results as new arguments of kind
// "prepared". The folded batch norm's weight and bias are the typical case.
//
// Pure layout ops on a weight itself (views, transposes, copies, expands) stay
// in the graph: the kernels read them in place, and a precomputed copy would
// only double the weight's memory. A weight the graph changes in place (listed
// in `dynoc.mutations`, like a BatchNorm's running statistics in training
// mode) is not constant and stays. A dtype conversion (a bf16 weight widened to
// f32) is computed once here rather than on every call.
//
//===----------------------------------------------------------------------===//
#include "dynoc/IR/GraphAttrs.h"
#include "dynoc/IR/OpClasses.h"
#include "dynoc/Passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Pass/Pass.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/JSON.h"

namespace dynoc {
#define GEN_PASS_DEF_PRECOMPUTEWEIGHTS
#include "dynoc/Passes/Passes.h.inc"
} // namespace dynoc

using namespace mlir;

namespace {

bool hasStaticTensorResults(Operation *op) {
  return llvm::all_of(op->getResultTypes(), [](Type t) {
    auto rt = t.dyn_cast<RankedTensorType>();
    return rt && rt.hasStaticShape();
  });
}

/// The names of the inputs `graph` changes in place (its `dynoc.mutations`).
FailureOr<llvm::StringSet<>> mutatedInputs(func::FuncOp graph) {
  llvm::StringSet<> names;
  auto text = graph->getAttrOfType<StringAttr>(dynoc::attrs::kMutations);
  if (!text)
    return names;
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(text.getValue());
  const llvm::json::Array *list = parsed ? parsed->getAsArray() : nullptr;
  if (!list) {
    if (!parsed)
      llvm::consumeError(parsed.takeError());
    return graph.emitError()
           << "'" << dynoc::attrs::kMutations << "' is not a JSON array";
  }
  for (const llvm::json::Value &m : *list) {
    const llvm::json::Object *o = m.getAsObject();
    std::optional<llvm::StringRef> input =
        o ? o->getString("input") : std::nullopt;
    if (!input)
      return graph.emitError() << "'" << dynoc::attrs::kMutations
                               << "' has an entry without an \"input\" name";
    names.insert(*input);
  }
  return names;
}

struct PrecomputeWeightsPass
    : dynoc::impl::PrecomputeWeightsBase<PrecomputeWeightsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<func::FuncOp> graphs;
    for (auto f : module.getOps<func::FuncOp>())
      if (f->hasAttr(dynoc::attrs::kInputs) &&
          !f->hasAttr(dynoc::attrs::kPrepares))
        graphs.push_back(f);
    for (func::FuncOp f : graphs)
      if (failed(outline(module, f)))
        return signalPassFailure();
  }

  LogicalResult outline(ModuleOp module, func::FuncOp graph) {
    auto inputs = graph->getAttrOfType<ArrayAttr>(dynoc::attrs::kInputs);
    Block &body = graph.getBody().front();
    if (!inputs || inputs.size() != body.getNumArguments())
      return graph.emitError() << "'" << dynoc::attrs::kInputs
                               << "' does not match the arguments";
    FailureOr<llvm::StringSet<>> mutated = mutatedInputs(graph);
    if (failed(mutated))
      return failure();
    llvm::DenseSet<Value> constant, hoisted;
    for (auto [arg, in] : llvm::zip(body.getArguments(), inputs)) {
      auto dict = in.cast<DictionaryAttr>();
      auto kind = dict.getAs<StringAttr>("kind");
      auto name = dict.getAs<StringAttr>("name");
      if (kind && kind.getValue() != "user" &&
          !(name && mutated->contains(name.getValue())))
        constant.insert(arg);
    }
    SmallVector<Operation *> ops;
    for (Operation &op : body.without_terminator()) {
      if (op.getNumRegions() || !isMemoryEffectFree(&op) ||
          !hasStaticTensorResults(&op) ||
          !llvm::all_of(op.getOperands(),
                        [&](Value v) { return constant.count(v); }))
        continue;
      bool onHoisted = llvm::any_of(op.getOperands(),
                                    [&](Value v) { return hoisted.count(v); });
      if (dynoc::isLayoutOp(&op) && !onHoisted)
        continue;
      ops.push_back(&op);
      for (Value r : op.getResults())
        constant.insert(r), hoisted.insert(r);
    }
    if (ops.empty())
      return success();
    // What the graph still reads: hoisted values used outside the hoisted ops.
    llvm::SetVector<Value> results;
    llvm::SetVector<BlockArgument> weights;
    llvm::DenseSet<Operation *> moving(ops.begin(), ops.end());
    for (Operation *op : ops) {
      for (Value v : op->getOperands())
        if (auto arg = v.dyn_cast<BlockArgument>())
          weights.insert(arg);
      for (Value r : op->getResults())
        for (OpOperand &use : r.getUses())
          if (!moving.count(use.getOwner()))
            results.insert(r);
    }
    // The prepare function: the weights it reads in, the hoisted ops, their
    // results out.
    OpBuilder b(module.getContext());
    b.setInsertionPointAfter(graph);
    SmallVector<Type> argTypes, resultTypes;
    SmallVector<Attribute> argInputs;
    for (BlockArgument w : weights) {
      argTypes.push_back(w.getType());
      argInputs.push_back(inputs[w.getArgNumber()]);
    }
    for (Value r : results)
      resultTypes.push_back(r.getType());
    std::string name = (graph.getSymName() + "__prepare").str();
    auto prepare = b.create<func::FuncOp>(
        graph.getLoc(), name, b.getFunctionType(argTypes, resultTypes));
    prepare->setAttr(dynoc::attrs::kInputs, b.getArrayAttr(argInputs));
    prepare->setAttr(dynoc::attrs::kPrepares,
                     b.getStringAttr(graph.getSymName()));
    Block *entry = prepare.addEntryBlock();
    IRMapping map;
    for (auto [w, arg] : llvm::zip(weights, entry->getArguments()))
      map.map(w, arg);
    b.setInsertionPointToEnd(entry);
    for (Operation *op : ops)
      b.clone(*op, map);
    SmallVector<Value> returned;
    for (Value r : results)
      returned.push_back(map.lookup(r));
    b.create<func::ReturnOp>(graph.getLoc(), returned);

    // The graph takes the results as "prepared" arguments.
    SmallVector<Attribute> newInputs(inputs.begin(), inputs.end());
    for (auto [k, r] : llvm::enumerate(results)) {
      unsigned index = body.getNumArguments();
      graph.insertArgument(index, r.getType(), {}, r.getLoc());
      r.replaceAllUsesWith(body.getArgument(index));
      newInputs.push_back(b.getDictionaryAttr(
          {b.getNamedAttr("kind", b.getStringAttr("prepared")),
           b.getNamedAttr("name",
                          b.getStringAttr(name + ":" + std::to_string(k)))}));
    }
    graph->setAttr(dynoc::attrs::kInputs, b.getArrayAttr(newInputs));
    // In reverse, so that each op's remaining users (hoisted ops after it)
    // are gone first.
    for (Operation *op : llvm::reverse(ops))
      op->erase();
    return success();
  }
};
} // namespace

std::unique_ptr<Pass> dynoc::createPrecomputeWeightsPass() {
  return std::make_unique<PrecomputeWeightsPass>();
}
