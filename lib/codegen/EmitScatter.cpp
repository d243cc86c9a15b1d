//===- EmitScatter.cpp - scatter, its reductions and index_add -----------===//
//
// scatter.src/.value/.reduce/.value_reduce, scatter_add, scatter_reduce.two
// and index_add: a copy of self, then dynoc_k::scatter (prelude/
// dynoc_kernels_index.h) writing each source element to the position its
// index names, combined by the op's reduction.
//
//===----------------------------------------------------------------------===//
#include "GraphEmitter.h"

namespace dynoc {
namespace codegen {

/// The kernel's reduction code of a `reduce` string: scatter.reduce's
/// ("add", "multiply") and scatter_reduce's ("sum", "prod", "mean", "amax",
/// "amin"), or -1.
static int reductionCode(StringRef r) {
  return llvm::StringSwitch<int>(r)
      .Cases("add", "sum", 1)
      .Cases("multiply", "prod", 2)
      .Case("mean", 3)
      .Case("amax", 4)
      .Case("amin", 5)
      .Default(-1);
}

LogicalResult GraphEmitter::emitScatter(Operation *op) {
  StringRef n = op->getName().getStringRef();
  Value self = op->getOperand(0), index = op->getOperand(1),
        out = op->getResult(0);
  bool indexAdd = n == "aten.index_add";
  Value src = op->getNumOperands() > 2 ? op->getOperand(2) : Value();
  // A 0-d operand is laid out as one of shape [1].
  auto asRank1 = [&](Value v) {
    return dimsOf(v).empty() ? DimList{"1"} : dimsOf(v);
  };
  const DimList sd = asRank1(self);
  if (sd.size() > 8)
    return fail(op) << "'" << n << "' into a tensor of rank " << sd.size()
                    << " is not supported yet (at most 8)";
  if (src && elementTypeOf(src) != elementTypeOf(self))
    return fail(op) << "'" << n << "' of " << elementTypeOf(src)
                    << " values into a " << elementTypeOf(self) << " tensor";
  auto dim = normDim(op, int64_t(scalarAttr(op, "dim", 0)), sd.size());
  if (failed(dim))
    return failure();
  int reduce = n == "aten.scatter_add" || indexAdd ? 1 : 0;
  if (auto r = op->getAttrOfType<StringAttr>("reduce")) {
    reduce = reductionCode(r.getValue());
    if (reduce < 0)
      return fail(op) << "'" << n << "' with reduce '" << r.getValue()
                      << "' is not supported";
  }
  auto self_ = op->getAttrOfType<BoolAttr>("include_self");
  bool includeSelf = !self_ || self_.getValue();
  std::string ct = elemCType(self);

  // What the kernel walks: the index's shape (scatter) or the source's
  // (index_add, whose 1-D index is read at the source's `dim`).
  DimList shape = indexAdd ? asRank1(src) : asRank1(index);
  if (shape.size() != sd.size() || (indexAdd && dimsOf(index).size() > 1))
    return fail(op) << "'" << n << "' needs an index of the input's rank";
  DimList is(shape.size(), "0");
  if (indexAdd)
    is[*dim] = "1";
  else
    is = broadcastStrideList(shape, shape);
  std::string srcName = "value", ss = braceList(DimList(shape.size(), "0"));
  std::string pre;
  if (src) {
    srcName = name(src);
    ss = braceList(broadcastStrideList(asRank1(src), asRank1(src)));
  } else {
    if (!op->getAttr("value"))
      return fail(op) << "'" << n << "' needs a value";
    pre = "    const " + ct + " value[] = {" + ct + "(" +
          fmtLiteral(scalarAttr(op, "value", 0), ct) + ")};\n";
  }
  setDims(out, op, dimsOf(self));
  if (name(out) != name(self))
    code += llvm::formatv("  dynoc_k::copy({0}, {1}, {2} * sizeof({3}));\n",
                          name(out), name(self), numelOf(self), ct);
  code += llvm::formatv(
      "  {{\n{0}    const int64_t is[] = {1}, ss[] = {2}, shape[] = {3}, "
      "os[] = {4};\n"
      "    if (int rc = dynoc_k::scatter({5}, {6}, is, {7}, ss, shape, os, "
      "{8}, {9}, {10}, {11}, {12})) return rc; }\n",
      pre, braceList(is), ss, braceList(shape), braceList(sd), name(out),
      name(index), srcName, shape.size(), *dim, reduce,
      includeSelf ? "true" : "false",
      fmtLiteral(scalarAttr(op, "alpha", 1.0), "double"));
  return success();
}

} // namespace codegen
} // namespace dynoc
