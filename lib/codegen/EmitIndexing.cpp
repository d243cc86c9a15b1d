//===- EmitIndexing.cpp - scans and padding ------------------------------===//
//
// cumsum (position ids from an attention mask) and constant_pad_nd (the
// padding of windowed attention and F.pad). Kernels in
// prelude/dynoc_kernels_nn.h.
//
//===----------------------------------------------------------------------===//
#include "GraphEmitter.h"

namespace dynoc {
namespace codegen {

LogicalResult GraphEmitter::emitCumsum(Operation *op) {
  Value in = op->getOperand(0), out = op->getResult(0);
  const DimList &d = dimsOf(in);
  auto dim = normDim(op, int64_t(scalarAttr(op, "dim", 0)), d.size());
  if (failed(dim))
    return failure();
  setDims(out, op, d);
  ArrayRef<std::string> all(d);
  code += llvm::formatv(
      "  dynoc_k::cumsum({0}, {1}, {2}, {3}, {4});\n", name(out), name(in),
      product(all.take_front(*dim)), d.empty() ? "1" : d[*dim],
      product(all.drop_front(std::min<size_t>(*dim + 1, d.size()))));
  return success();
}

LogicalResult GraphEmitter::emitConstantPad(Operation *op) {
  Value in = op->getOperand(0), out = op->getResult(0);
  const DimList &d = dimsOf(in);
  auto pad = op->getAttrOfType<DenseI64ArrayAttr>("pad");
  if (!pad || pad.size() % 2 || pad.size() / 2 > d.size())
    return fail(op) << "constant_pad_nd needs pairs "
                       "of pads, at most two per dim";
  if (d.size() > 8) // the CUDA kernel's PadShape
    return fail(op) << "constant_pad_nd of a tensor of more than 8 dims";
  DimList outDims = d, before(d.size(), "0");
  for (size_t k = 0; k < pad.size() / 2; ++k) {
    size_t dim = d.size() - 1 - k;
    int64_t lo = pad[2 * k], hi = pad[2 * k + 1];
    before[dim] = std::to_string(lo);
    outDims[dim] =
        isLiteral(d[dim])
            ? std::to_string(std::stoll(d[dim]) + lo + hi)
            : resolved("(" + d[dim] + " + " + std::to_string(lo + hi) + ")");
  }
  setDims(out, op, outDims);
  const DimList &o = dimsOf(out);
  code += llvm::formatv(
      "  {{ const int64_t os[] = {0}, is[] = {1}, before[] = {2};\n"
      "    dynoc_k::constant_pad({3}, {4}, os, is, before, {5}, {6}({7})); }\n",
      braceList(o), braceList(d), braceList(before), name(out), name(in),
      d.size(), elemCType(out),
      fmtLiteral(scalarAttr(op, "value", 0), elemCType(out)));
  return success();
}

} // namespace codegen
} // namespace dynoc
