//===- EmitRandom.cpp - random fills -----------------------------------===//
//
// Ops that draw random numbers: dropout's bernoulli, the initializers'
// uniform/normal fills, rand/randn and their _like forms. The kernel
// (dynoc_k::random_fill) is counter-based and seeded per call: a built graph
// matches eager in distribution, not element by element (docs/passes.md).
//
//===----------------------------------------------------------------------===//
#include "GraphEmitter.h"

namespace dynoc {
namespace codegen {

LogicalResult GraphEmitter::emitRandom(Operation *op) {
  StringRef n = op->getName().getStringRef();
  Value out = op->getResult(0);
  // Shape: from the size attribute (rand, randn) or the first operand.
  if (auto size = op->getAttrOfType<DenseI64ArrayAttr>("size")) {
    DimList d;
    for (int64_t x : size.asArrayRef())
      d.push_back(std::to_string(x));
    setDims(out, op, d);
  } else if (op->getNumOperands() > 0) {
    setDims(out, op, dimsOf(op->getOperand(0)));
  } else {
    return fail(op) << "'" << n << "' without a size";
  }
  int kind;
  double a = 0, b = 1;
  std::string p = "static_cast<const " + elemCType(out) + " *>(nullptr)";
  if (n == "aten.uniform") {
    kind = 0, a = scalarAttr(op, "from", 0), b = scalarAttr(op, "to", 1);
  } else if (n == "aten.rand" || n == "aten.rand_like") {
    kind = 0;
  } else if (n == "aten.normal_functional") {
    kind = 1, a = scalarAttr(op, "mean", 0), b = scalarAttr(op, "std", 1);
  } else if (n == "aten.randn" || n == "aten.randn_like") {
    kind = 1;
  } else if (n == "aten.bernoulli.p") {
    kind = 2, a = scalarAttr(op, "p", 0.5);
  } else if (n == "aten.bernoulli") {
    kind = 3, p = name(op->getOperand(0));
  } else if (n == "aten.bernoulli.Tensor") {
    kind = 3, p = name(op->getOperand(1));
    require(numelOf(op->getOperand(1)) + " == " + numelOf(out), op,
            "bernoulli's probabilities must have the input's shape");
  } else {
    return fail(op) << "no random kernel for '" << n << "'";
  }
  code += llvm::formatv(
      "  dynoc_k::random_fill({0}, {1}, {2}, {3:e17}, {4:e17}, {5});\n",
      name(out), numelOf(out), kind, a, b, p);
  return success();
}

} // namespace codegen
} // namespace dynoc
