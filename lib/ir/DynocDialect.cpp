//===- DynocDialect.cpp - verifier of graph-file metadata -----------------===//
#include "dynoc/IR/AtenDialect.h"
#include "dynoc/IR/GraphAttrs.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"

using namespace mlir;

#include "dynoc/IR/DynocDialect.cpp.inc"

#define GET_OP_CLASSES
#include "dynoc/IR/DynocOps.cpp.inc"

void dynoc::DynocDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dynoc/IR/DynocOps.cpp.inc"
      >();
}

LogicalResult dynoc::FusionGroupOp::verify() {
  Block &body = getBody().front();
  if (body.getNumArguments() != getInputs().size())
    return emitOpError() << "has " << getInputs().size()
                         << " inputs but its body takes "
                         << body.getNumArguments() << " arguments";
  for (auto [i, in] : llvm::enumerate(getInputs()))
    if (body.getArgument(i).getType() != in.getType())
      return emitOpError() << "body argument " << i << " has type "
                           << body.getArgument(i).getType() << ", input has "
                           << in.getType();
  auto yield = dyn_cast<dynoc::YieldOp>(body.getTerminator());
  if (!yield)
    return emitOpError() << "body must end in dynoc.yield";
  if (yield.getValue().getType() != getResult().getType())
    return emitOpError() << "yields " << yield.getValue().getType()
                         << " but the group's result is "
                         << getResult().getType();
  if (getKind() != "elementwise" && getKind() != "epilogue")
    return emitOpError() << "has unknown kind '" << getKind()
                         << "' (expected elementwise or epilogue)";
  return success();
}

namespace {
const char *const kReduceOps[] = {"sum", "avg", "product", "min", "max"};

LogicalResult verifyReduceOp(Operation *op, StringRef reduceOp) {
  if (!llvm::is_contained(kReduceOps, reduceOp))
    return op->emitOpError() << "has unknown reduce_op '" << reduceOp
                             << "' (expected sum, avg, product, min or max)";
  return success();
}

/// `result` is `input` with dim 0 scaled by `num / den` (a gather's
/// concatenation, a scatter's slice), other dims and the dtype unchanged.
LogicalResult verifyDim0(Operation *op, Value input, Value result, int64_t num,
                         int64_t den) {
  auto in = input.getType().cast<RankedTensorType>();
  auto out = result.getType().cast<RankedTensorType>();
  if (in.getElementType() != out.getElementType() ||
      in.getRank() != out.getRank() || in.getRank() == 0)
    return op->emitOpError() << "takes " << in << " and gives " << out
                             << ": one element type and rank (at least 1)";
  for (int64_t d = 1; d < in.getRank(); ++d)
    if (in.getDimSize(d) != out.getDimSize(d))
      return op->emitOpError() << "changes dim " << d << " (" << in << " to "
                               << out << "): only dim 0 may";
  if (!in.isDynamicDim(0) && !out.isDynamicDim(0) &&
      in.getDimSize(0) * num != out.getDimSize(0) * den)
    return op->emitOpError() << "gives dim 0 of " << out.getDimSize(0)
                             << " from " << in.getDimSize(0)
                             << " over a group of "
                             << (num > 1 ? num : den) << " ranks";
  return success();
}

LogicalResult verifySameType(Operation *op, Value input, Value result) {
  if (input.getType() != result.getType())
    return op->emitOpError() << "gives " << result.getType() << " for "
                             << input.getType() << " (the same type)";
  return success();
}
} // namespace

LogicalResult dynoc::AllReduceOp::verify() {
  if (getGroupSize() < 1)
    return emitOpError() << "has group_size " << getGroupSize();
  if (failed(verifyReduceOp(*this, getReduceOp())))
    return failure();
  return verifySameType(*this, getInput(), getResult());
}

LogicalResult dynoc::AllGatherIntoTensorOp::verify() {
  if (getGroupSize() < 1)
    return emitOpError() << "has group_size " << getGroupSize();
  return verifyDim0(*this, getInput(), getResult(), getGroupSize(), 1);
}

LogicalResult dynoc::ReduceScatterTensorOp::verify() {
  if (getGroupSize() < 1)
    return emitOpError() << "has group_size " << getGroupSize();
  if (failed(verifyReduceOp(*this, getReduceOp())))
    return failure();
  return verifyDim0(*this, getInput(), getResult(), 1, getGroupSize());
}

LogicalResult dynoc::BroadcastOp::verify() {
  if (getGroupSize() < 1 || getSrc() < 0 || getSrc() >= getGroupSize())
    return emitOpError() << "has source rank " << getSrc()
                         << " in a group of " << getGroupSize();
  return verifySameType(*this, getInput(), getResult());
}

LogicalResult dynoc::AllToAllSingleOp::verify() {
  int64_t size = getGroupSize();
  if (size < 1)
    return emitOpError() << "has group_size " << size;
  auto in = getInput().getType().cast<RankedTensorType>();
  auto out = getResult().getType().cast<RankedTensorType>();
  ArrayRef<int64_t> ins = getInputSplitSizes(), outs = getOutputSplitSizes();
  for (auto [what, splits] : {std::pair{"input", ins}, std::pair{"output", outs}}) {
    if (!splits.empty() && int64_t(splits.size()) != size)
      return emitOpError() << "has " << splits.size() << " " << what
                           << " split sizes for a group of " << size
                           << " ranks";
    if (llvm::any_of(splits, [](int64_t n) { return n < 0; }))
      return emitOpError() << "has a negative " << what << " split size";
  }
  auto total = [](ArrayRef<int64_t> s) {
    int64_t n = 0;
    for (int64_t x : s)
      n += x;
    return n;
  };
  if (!ins.empty() && !in.isDynamicDim(0) && total(ins) != in.getDimSize(0))
    return emitOpError() << "splits dim 0 of " << in.getDimSize(0)
                         << " into input slices of " << total(ins) << " rows";
  if (!outs.empty() && !out.isDynamicDim(0) && total(outs) != out.getDimSize(0))
    return emitOpError() << "gives dim 0 of " << out.getDimSize(0)
                         << " from output slices of " << total(outs) << " rows";
  // The element type, the rank and dims past 0 (dim 0 of each side: equal
  // slices keep it, splits give their totals).
  return verifyDim0(*this, getInput(), getResult(),
                    outs.empty() ? 1 : total(outs),
                    ins.empty() ? 1 : total(ins));
}

LogicalResult dynoc::WaitTensorOp::verify() {
  return verifySameType(*this, getInput(), getResult());
}

namespace {
LogicalResult verifyInputs(func::FuncOp func, Attribute attr) {
  auto list = attr.dyn_cast<ArrayAttr>();
  if (!list)
    return func.emitOpError() << "'" << dynoc::attrs::kInputs
                              << "' must be an array of dictionaries";
  if (list.size() != func.getNumArguments())
    return func.emitOpError() << "'" << dynoc::attrs::kInputs << "' describes "
                              << list.size() << " inputs but the function has "
                              << func.getNumArguments() << " arguments";
  for (auto [i, entry] : llvm::enumerate(list)) {
    auto dict = entry.dyn_cast<DictionaryAttr>();
    auto kind = dict ? dict.getAs<StringAttr>("kind") : StringAttr();
    auto name = dict ? dict.getAs<StringAttr>("name") : StringAttr();
    if (!kind || !name)
      return func.emitOpError()
             << "input " << i << " needs string attributes 'kind' and 'name'";
    if (!llvm::is_contained(ArrayRef<StringRef>{"user", "parameter", "buffer",
                                                "constant", "prepared"},
                            kind.getValue()))
      return func.emitOpError()
             << "input " << i << " has unknown kind '" << kind.getValue()
             << "' (expected user, parameter, buffer, constant or prepared)";
  }
  return success();
}

/// A size guard: `sum(coefficient * size(input, dim)) + constant OP 0`, with
/// `terms` listing (input, dim, coefficient) triples.
LogicalResult verifySizeGuard(func::FuncOp func, DictionaryAttr dict,
                              size_t i) {
  auto terms = dict.getAs<DenseI64ArrayAttr>("terms");
  auto constant = dict.getAs<IntegerAttr>("constant");
  auto op = dict.getAs<StringAttr>("op");
  if (!terms || !constant || !op || terms.size() % 3 != 0)
    return func.emitOpError()
           << "size guard " << i
           << " needs 'terms' ((input, dim, coefficient) triples), 'constant' "
              "and 'op'";
  if (!llvm::is_contained(ArrayRef<StringRef>{"<", "<=", "==", "!=", ">", ">="},
                          op.getValue()))
    return func.emitOpError()
           << "size guard " << i << " has unknown op '" << op.getValue() << "'";
  ArrayRef<int64_t> t = terms.asArrayRef();
  for (size_t k = 0; k < t.size(); k += 3) {
    if (t[k] < 0 || t[k] >= (int64_t)func.getNumArguments())
      return func.emitOpError() << "guard " << i << " names input " << t[k]
                                << ", which does not exist";
    auto argType = func.getArgumentTypes()[t[k]].dyn_cast<RankedTensorType>();
    if (!argType || t[k + 1] < 0 || t[k + 1] >= argType.getRank())
      return func.emitOpError()
             << "size guard " << i << " names dim " << t[k + 1] << " of input "
             << t[k] << ", which it does not have";
  }
  return success();
}

LogicalResult verifyGuards(func::FuncOp func, Attribute attr) {
  auto list = attr.dyn_cast<ArrayAttr>();
  if (!list)
    return func.emitOpError() << "'" << dynoc::attrs::kGuards
                              << "' must be an array of dictionaries";
  for (auto [i, entry] : llvm::enumerate(list)) {
    auto dict = entry.dyn_cast<DictionaryAttr>();
    if (!dict || !dict.getAs<StringAttr>("kind") ||
        !dict.getAs<StringAttr>("text"))
      return func.emitOpError()
             << "guard " << i << " needs string attributes 'kind' and 'text'";
    StringRef kind = dict.getAs<StringAttr>("kind").getValue();
    if (kind == "size") {
      if (failed(verifySizeGuard(func, dict, i)))
        return failure();
      continue;
    }
    if (kind != "tensor_match")
      continue;
    auto input = dict.getAs<IntegerAttr>("input");
    auto sizes = dict.getAs<DenseI64ArrayAttr>("sizes");
    auto dtype = dict.getAs<TypeAttr>("dtype");
    if (!input || !sizes || !dtype)
      return func.emitOpError() << "tensor_match guard " << i
                                << " needs 'input', 'sizes' and 'dtype'";
    int64_t idx = input.getInt();
    if (idx < 0 || idx >= (int64_t)func.getNumArguments())
      return func.emitOpError() << "guard " << i << " names input " << idx
                                << ", which does not exist";
    auto argType = func.getArgumentTypes()[idx].dyn_cast<RankedTensorType>();
    if (!argType || argType.getRank() != (int64_t)sizes.size() ||
        argType.getElementType() != dtype.getValue())
      return func.emitOpError()
             << "guard " << i << " does not agree with the type of argument "
             << idx;
  }
  return success();
}
} // namespace

LogicalResult dynoc::DynocDialect::verifyOperationAttribute(Operation *op,
                                                            NamedAttribute a) {
  StringRef name = a.getName().getValue();
  if (isa<ModuleOp>(op)) {
    if (name == attrs::kVersion) {
      auto v = a.getValue().dyn_cast<IntegerAttr>();
      if (!v)
        return op->emitOpError() << "'" << name << "' must be an integer";
      if (v.getInt() > attrs::kFormatVersion)
        return op->emitOpError() << "graph format version " << v.getInt()
                                 << " is newer than this dynoc reads ("
                                 << attrs::kFormatVersion << ")";
      return success();
    }
    return op->emitOpError() << "unknown module attribute '" << name << "'";
  }
  if (name == attrs::kShapes) {
    auto maps = a.getValue().dyn_cast<ArrayAttr>();
    if (!maps || maps.size() != op->getNumResults() ||
        !llvm::all_of(maps, [](Attribute m) {
          auto map = m.dyn_cast<AffineMapAttr>();
          return map && map.getValue().getNumDims() == 0;
        }))
      return op->emitOpError() << "'" << name
                               << "' must hold one affine map ()[symbols] -> "
                                  "(dims) per result";
    for (auto [k, m] : llvm::enumerate(maps)) {
      auto type = op->getResult(k).getType().dyn_cast<RankedTensorType>();
      if (!type ||
          type.getRank() !=
              (int64_t)m.cast<AffineMapAttr>().getValue().getNumResults())
        return op->emitOpError() << "'" << name << "' gives result " << k
                                 << " a rank its type does not have";
    }
    return success();
  }
  if (name == attrs::kSymSizes) {
    auto dict = a.getValue().dyn_cast<DictionaryAttr>();
    if (!dict)
      return op->emitOpError()
             << "'" << name << "' must be a dictionary of affine maps";
    for (NamedAttribute e : dict) {
      auto map = e.getValue().dyn_cast<AffineMapAttr>();
      // An int-array attribute: one size per entry; an int attribute: one.
      Attribute named = op->getAttr(e.getName());
      auto sizes = named.dyn_cast_or_null<DenseI64ArrayAttr>();
      int64_t entries = sizes                                  ? sizes.size()
                        : named.isa_and_nonnull<IntegerAttr>() ? 1
                                                               : -1;
      if (!map || map.getValue().getNumDims() != 0)
        return op->emitOpError()
               << "'" << name << "' entry '" << e.getName().getValue()
               << "' must be an affine map ()[symbols] -> "
                  "(sizes)";
      if (entries != (int64_t)map.getValue().getNumResults())
        return op->emitOpError()
               << "'" << name << "' entry '" << e.getName().getValue()
               << "' must give one size per entry of the op's attribute of "
                  "that name";
    }
    return success();
  }
  auto func = dyn_cast<func::FuncOp>(op);
  if (!func)
    return op->emitOpError()
           << "'" << name << "' is only allowed on func.func and module";
  if (name == attrs::kDimSymbols) {
    auto list = a.getValue().dyn_cast<ArrayAttr>();
    if (!list ||
        !llvm::all_of(list, [](Attribute s) { return s.isa<StringAttr>(); }))
      return op->emitOpError()
             << "'" << name << "' must be an array of strings";
    return success();
  }
  if (name == attrs::kKind) {
    auto kind = a.getValue().dyn_cast<StringAttr>();
    if (!kind || kind.getValue() != "backward")
      return op->emitOpError() << "'" << name << "' must be \"backward\"";
    return success();
  }
  if (name == attrs::kInputs)
    return verifyInputs(func, a.getValue());
  if (name == attrs::kGuards)
    return verifyGuards(func, a.getValue());
  if (name == attrs::kEntry || name == attrs::kOutputs ||
      name == attrs::kWeights || name == attrs::kMutations ||
      name == attrs::kPrepares || name == attrs::kGrads ||
      name == attrs::kFunction) {
    if (!a.getValue().isa<StringAttr>())
      return op->emitOpError() << "'" << name << "' must be a string";
    return success();
  }
  return op->emitOpError() << "unknown attribute '" << name << "'";
}
