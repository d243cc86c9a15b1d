//===- CpuEmitter.cpp - aten graph -> C++ kernels -------------------------===//
//
// One C++ function per graph (func.func). Each aten op becomes a loop nest or a
// call into dynoc_kernels.h (GEMM through oneDNN). Intermediates live in
// buffers freed on return; results are written straight into the caller's
// output buffers.
//
//===----------------------------------------------------------------------===//
#include "FuncEmitter.h"
#include "dynoc/CodegenCPU/CpuCodegen.h"
#include "dynoc/IR/AtenDialect.h"
#include "dynoc/IR/GraphAttrs.h"
#include "dynoc/IR/OpClasses.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/FormatVariadic.h"

#include <nlohmann/json.hpp>

#include <cctype>
#include <limits>
#include <numeric>
#include <set>

using namespace mlir;
using nlohmann::json;

namespace dynoc {
namespace cpu {

const llvm::StringMap<FuncEmitter::EmitFn> &FuncEmitter::table() {
  static const llvm::StringMap<EmitFn> t = [] {
    llvm::StringMap<EmitFn> m;
    for (const char *n :
         {"aten.relu", "aten.sigmoid", "aten.tanh", "aten.neg", "aten.exp",
          "aten.gelu", "aten.silu", "aten.sqrt", "aten.rsqrt", "aten.abs",
          "aten.sin", "aten.cos", "aten.log", "aten.logical_not"})
      m[n] = &FuncEmitter::emitUnary;
    for (const char *n : {"aten.add.Tensor", "aten.sub.Tensor",
                          "aten.mul.Tensor", "aten.div.Tensor", "aten.maximum",
                          "aten.minimum", "aten.bitwise_and.Tensor",
                          "aten.bitwise_or.Tensor", "aten.bitwise_xor.Tensor"})
      m[n] = &FuncEmitter::emitBinary;
    for (const char *n : {"aten.add.Scalar", "aten.sub.Scalar",
                          "aten.mul.Scalar", "aten.div.Scalar"})
      m[n] = &FuncEmitter::emitScalarBinary;
    for (const char *cmp : {"eq", "ne", "lt", "le", "gt", "ge"}) {
      m[std::string("aten.") + cmp + ".Tensor"] = &FuncEmitter::emitBinary;
      m[std::string("aten.") + cmp + ".Scalar"] =
          &FuncEmitter::emitScalarBinary;
    }
    for (const char *n : {"aten.mm", "aten.addmm", "aten.linear"})
      m[n] = &FuncEmitter::emitMatmul;
    for (const char *n : {"aten.t", "aten.transpose.int", "aten.permute"})
      m[n] = &FuncEmitter::emitTranspose;
    for (const char *n :
         {"aten.view", "aten._unsafe_view", "aten.reshape", "aten.clone",
          "aten.contiguous", "aten.alias", "aten.detach",
          "aten.flatten.using_ints", "aten.unsqueeze", "aten.squeeze.dim",
          "aten.dropout", "aten.lift_fresh_copy", "aten.lift_fresh",
          "aten._to_copy", "aten.view_as"})
      m[n] = &FuncEmitter::emitCopy;
    m["aten.expand"] = &FuncEmitter::emitExpand;
    m["aten.expand_as"] = &FuncEmitter::emitExpand;
    m["aten.bmm"] = &FuncEmitter::emitBmm;
    m["aten.convolution"] = &FuncEmitter::emitConvolution;
    m["aten.native_batch_norm"] = &FuncEmitter::emitBatchNorm;
    m["aten._native_batch_norm_legit_no_training"] =
        &FuncEmitter::emitBatchNorm;
    m["aten.max_pool2d_with_indices"] = &FuncEmitter::emitMaxPool;
    m["aten.native_layer_norm"] = &FuncEmitter::emitLayerNorm;
    m["aten._softmax"] = &FuncEmitter::emitSoftmax;
    for (const char *n : {"aten.sum", "aten.sum.dim_IntList", "aten.mean",
                          "aten.mean.dim", "aten.amax", "aten.amin"})
      m[n] = &FuncEmitter::emitReduction;
    m["aten._log_softmax"] = &FuncEmitter::emitSoftmax;
    m["aten.split.Tensor"] = &FuncEmitter::emitSplit;
    m["aten.unsafe_split.Tensor"] = &FuncEmitter::emitSplit;
    m["aten.leaky_relu"] = &FuncEmitter::emitUnary;
    m["aten.hardtanh"] = &FuncEmitter::emitUnary; // relu6, F.hardtanh
    m["aten.arange.start"] = &FuncEmitter::emitArange;
    m["aten.arange.start_step"] = &FuncEmitter::emitArange;
    m["aten.zero"] = &FuncEmitter::emitFull;
    m["aten.empty_like"] = &FuncEmitter::emitFull;
    m["aten.empty.memory_format"] = &FuncEmitter::emitFull;
    m["aten.new_ones"] = &FuncEmitter::emitFull;
    m["aten.new_zeros"] = &FuncEmitter::emitFull;
    m["aten.scalar_tensor"] = &FuncEmitter::emitFull;
    for (const char *n : {"aten.nll_loss_forward", "aten.nll_loss2d_forward"})
      m[n] = &FuncEmitter::emitNllLoss;
    m["aten.mkldnn_rnn_layer"] = &FuncEmitter::emitLstmLayer;
    m["aten.mse_loss"] = &FuncEmitter::emitMseLoss;
    m["aten.cumsum"] = &FuncEmitter::emitCumsum;
    m["aten.constant_pad_nd"] = &FuncEmitter::emitConstantPad;
    for (const char *n :
         {"aten.uniform", "aten.normal_functional", "aten.bernoulli.p",
          "aten.bernoulli", "aten.bernoulli.Tensor", "aten.rand", "aten.randn",
          "aten.rand_like", "aten.randn_like"})
      m[n] = &FuncEmitter::emitRandom;
    m["dynoc.fusion_group"] = &FuncEmitter::emitFusionGroup;
    m["aten.embedding"] = &FuncEmitter::emitEmbedding;
    m["aten.arange"] = &FuncEmitter::emitArange;
    for (const char *n :
         {"aten.full", "aten.ones", "aten.zeros", "aten.full_like",
          "aten.ones_like", "aten.zeros_like"})
      m[n] = &FuncEmitter::emitFull;
    m["aten.where.self"] = &FuncEmitter::emitWhere;
    m["aten.masked_fill.Scalar"] = &FuncEmitter::emitWhere;
    m["aten.argmax"] = &FuncEmitter::emitArgReduce;
    m["aten.argmin"] = &FuncEmitter::emitArgReduce;
    m["aten.index.Tensor"] = &FuncEmitter::emitIndex;
    m["aten.slice.Tensor"] = &FuncEmitter::emitSliceSelect;
    m["aten.select.int"] = &FuncEmitter::emitSliceSelect;
    m["aten.cat"] = &FuncEmitter::emitCat;
    m["aten.stack"] = &FuncEmitter::emitStack;
    m["aten.unbind.int"] = &FuncEmitter::emitUnbind;
    m["aten.gather"] = &FuncEmitter::emitGather;
    m["aten.pow.Tensor_Scalar"] = &FuncEmitter::emitPow;
    m["aten._scaled_dot_product_flash_attention_for_cpu"] =
        &FuncEmitter::emitAttention;
    return m;
  }();
  return t;
}

void FuncEmitter::setDims(Value v, Operation *op, const DimList &computed) {
  auto type = typeShape(v);
  DimList out(type.size());
  for (size_t d = 0; d < type.size(); ++d) {
    if (ShapedType::isDynamic(type[d])) {
      out[d] = computed[d];
      continue;
    }
    out[d] = std::to_string(type[d]);
    if (!isLiteral(computed[d]))
      require(computed[d] + " == " + out[d], op,
              "result dim " + std::to_string(d) + " must be " + out[d]);
  }
  dims[v] = std::move(out);
}

std::string FuncEmitter::broadcastStrides(Value v, const DimList &out) {
  const DimList &in = dimsOf(v);
  DimList strides(out.size(), "0");
  DimList inner;
  for (int i = (int)in.size() - 1, o = (int)out.size() - 1; i >= 0; --i, --o) {
    std::string s = product(inner);
    if (in[i] == "1")
      strides[o] = out[o] == "1" ? s : "0";
    else if (!isLiteral(in[i]))
      strides[o] = "(" + in[i] + " == 1 ? 0 : " + s + ")";
    else
      strides[o] = s;
    inner.push_back(in[i]);
  }
  return braceList(strides);
}

double FuncEmitter::scalarAttr(Operation *op, StringRef n, double dflt) {
  Attribute a = op->getAttr(n);
  if (!a)
    return dflt;
  if (auto i = a.dyn_cast<IntegerAttr>())
    return i.getType().isInteger(1) ? double(i.getValue().getBoolValue())
                                    : double(i.getInt());
  if (auto f = a.dyn_cast<FloatAttr>())
    return f.getValueAsDouble();
  if (auto b = a.dyn_cast<BoolAttr>())
    return b.getValue();
  return dflt;
}

LogicalResult FuncEmitter::checkTypes(Operation *op) {
  SmallVector<Type> types;
  for (Value v : op->getOperands())
    if (!scalarArgs.count(v))
      types.push_back(v.getType());
  for (Value r : op->getResults())
    if (needed(r))
      types.push_back(r.getType());
  for (Type t : types) {
    auto rt = t.dyn_cast<RankedTensorType>();
    if (!rt)
      return op->emitError() << "dynoc build (cpu): '" << op->getName()
                             << "' has a non-tensor value of type " << t
                             << ", which the CPU backend does not support yet";
    if (dtypeBit(rt.getElementType()) & supportedDTypes(op))
      continue;
    return op->emitError() << "dynoc build (cpu): '" << op->getName()
                           << "' uses dtype " << rt.getElementType()
                           << ", which the CPU backend does not run this op "
                              "on yet";
  }
  return success();
}

std::string FuncEmitter::hardtanhExpr(Operation *op, const std::string &x,
                                      StringRef ctype) {
  std::string lo = fmtLiteral(scalarAttr(op, "min_val", -1.0), ctype),
              hi = fmtLiteral(scalarAttr(op, "max_val", 1.0), ctype);
  return "(" + x + " < " + lo + " ? " + lo + " : " + x + " > " + hi + " ? " +
         hi + " : " + x + ")";
}

LogicalResult FuncEmitter::emitUnary(Operation *op) {
  StringRef n = op->getName().getStringRef();
  std::string f;
  if (n == "aten.relu")
    f = "x > 0.f ? x : 0.f";
  else if (n == "aten.sigmoid")
    f = "1.f / (1.f + std::exp(-x))";
  else if (n == "aten.tanh")
    f = "std::tanh(x)";
  else if (n == "aten.neg")
    f = "-x";
  else if (n == "aten.exp")
    f = "std::exp(x)";
  else if (n == "aten.silu")
    f = "x / (1.f + std::exp(-x))";
  else if (n == "aten.sqrt")
    f = "std::sqrt(x)";
  else if (n == "aten.rsqrt")
    f = "1.f / std::sqrt(x)";
  else if (n == "aten.abs")
    f = "std::fabs(x)";
  else if (n == "aten.sin")
    f = "std::sin(x)";
  else if (n == "aten.cos")
    f = "std::cos(x)";
  else if (n == "aten.log")
    f = "std::log(x)";
  else if (n == "aten.logical_not")
    f = "!x";
  else if (n == "aten.hardtanh")
    f = hardtanhExpr(op, "x", elemCType(op->getResult(0)));
  else if (n == "aten.leaky_relu")
    f = "x > 0 ? x : x * " + fmtLiteral(scalarAttr(op, "negative_slope", 0.01),
                                        elemCType(op->getResult(0)));
  else if (n == "aten.gelu") {
    auto approx = op->getAttrOfType<StringAttr>("approximate");
    if (approx && approx.getValue() != "none" && approx.getValue() != "tanh")
      return op->emitError()
             << "dynoc build (cpu): unknown gelu approximation '"
             << approx.getValue() << "'";
    f = approx && approx.getValue() == "tanh" ? "dynoc_k::gelu_tanh(x)"
                                              : "dynoc_k::gelu(x)";
  }
  // Transcendental ops run on whole vectors through Sleef.
  std::string vec;
  if (n == "aten.exp")
    vec = "dynoc_k::vexp(x)";
  else if (n == "aten.tanh")
    vec = "dynoc_k::vtanh(x)";
  else if (n == "aten.sigmoid")
    vec = "1.f / (1.f + dynoc_k::vexp(-x))";
  else if (n == "aten.silu")
    vec = "x / (1.f + dynoc_k::vexp(-x))";
  else if (n == "aten.gelu")
    vec =
        f == "dynoc_k::gelu(x)"
            ? "0.5f * x * (1.f + dynoc_k::verf_fast(x * 0.70710678118654752f))"
            : "0.5f * x * (1.f + dynoc_k::vtanh(0.79788456080286536f * (x + "
              "0.044715f * x * x * x)))";
  Value out = op->getResult(0);
  setDims(out, op, dimsOf(op->getOperand(0)));
  std::string ct = elemCType(out);
  if (elemCType(op->getOperand(0)) != ct || ct != "float") {
    // Other dtypes compute per element in the result's type.
    if (f == "dynoc_k::gelu(x)")
      f = "0.5 * x * (1 + std::erf(x * 0.70710678118654752440))";
    else if (f == "dynoc_k::gelu_tanh(x)")
      f = "0.5 * x * (1 + std::tanh(0.79788456080286516 * (x + 0.044715 * x "
          "* x * x)))";
    std::string param = n == "aten.logical_not" ? "auto" : ct;
    code += llvm::formatv("  dynoc_k::unary({0}, {1}, {2}, []({4} x) {{ "
                          "return {5}({3}); });\n",
                          name(out), name(op->getOperand(0)), numelOf(out), f,
                          param, ct);
    return success();
  }
  if (!vec.empty())
    code +=
        llvm::formatv("  dynoc_k::vunary({0}, {1}, {2}, [](dynoc_k::vf x) "
                      "{{ return {3}; });\n",
                      name(out), name(op->getOperand(0)), numelOf(out), vec);
  else
    code += llvm::formatv(
        "  dynoc_k::unary({0}, {1}, {2}, [](float x) {{ return {3}; });\n",
        name(out), name(op->getOperand(0)), numelOf(out), f);
  return success();
}

DimList FuncEmitter::broadcastDims(Operation *op, ArrayRef<Value> operands) {
  size_t rank = typeShape(op->getResult(0)).size();
  DimList computed(rank, "1");
  for (Value v : operands) {
    const DimList &d = dimsOf(v);
    for (size_t i = 0; i < d.size(); ++i) {
      std::string &o = computed[rank - d.size() + i];
      const std::string &in = d[i];
      if (in == "1" || in == o)
        continue;
      if (o == "1") {
        o = in;
        continue;
      }
      o = resolved("dynoc_k::broadcast(" + o + ", " + in + ")");
      require(o + " >= 0", op,
              "the operands do not broadcast in dim " +
                  std::to_string(rank - d.size() + i));
    }
  }
  return computed;
}

LogicalResult FuncEmitter::emitBinary(Operation *op) {
  StringRef n = op->getName().getStringRef();
  Value out = op->getResult(0), lhs = op->getOperand(0),
        rhs = op->getOperand(1);
  std::string ct = elemCType(out);
  double alpha = scalarAttr(op, "alpha", 1.0);
  std::string f;
  if (n == "aten.add.Tensor")
    f = alpha == 1.0 ? "a + b" : "a + " + fmtLiteral(alpha, ct) + " * b";
  else if (n == "aten.sub.Tensor")
    f = alpha == 1.0 ? "a - b" : "a - " + fmtLiteral(alpha, ct) + " * b";
  else if (n == "aten.mul.Tensor")
    f = "a * b";
  else if (n == "aten.div.Tensor") {
    if (op->getAttr("rounding_mode"))
      return op->emitError()
             << "dynoc build (cpu): div with a rounding_mode is "
                "not supported yet";
    f = "a / b";
  } else if (n == "aten.maximum")
    f = "a > b || a != a ? a : b";
  else if (n == "aten.minimum")
    f = "a < b || a != a ? a : b";
  else if (n == "aten.bitwise_and.Tensor")
    f = "a & b";
  else if (n == "aten.bitwise_or.Tensor")
    f = "a | b";
  else if (n == "aten.bitwise_xor.Tensor")
    f = "a ^ b";
  else {
    f = ("a " + comparisonOperator(n) + " b").str();
    ct = promotedCType({lhs, rhs});
  }
  setDims(out, op, broadcastDims(op, {lhs, rhs}));
  const DimList &outDims = dimsOf(out);
  code += llvm::formatv(
      "  {{ const int64_t as[] = {0}, bs[] = {1}, shape[] = {2};\n"
      "    dynoc_k::binary<{8}>({3}, {4}, as, {5}, bs, shape, {6}, "
      "[]({8} a, {8} b) {{ return {7}; }); }\n",
      broadcastStrides(lhs, outDims), broadcastStrides(rhs, outDims),
      braceList(outDims), name(out), name(lhs), name(rhs), outDims.size(), f,
      ct);
  return success();
}

LogicalResult FuncEmitter::emitScalarBinary(Operation *op) {
  StringRef n = op->getName().getStringRef();
  if (!op->getAttr("other"))
    return op->emitError() << "dynoc build (cpu): '" << n
                           << "' needs its 'other' attribute";
  Value in = op->getOperand(0), out = op->getResult(0);
  double other = scalarAttr(op, "other", 0.0),
         alpha = scalarAttr(op, "alpha", 1.0);
  // Arithmetic computes in the result's type; a comparison in the input's,
  // or in double when an integer tensor meets a fractional number.
  std::string ct = elemCType(out);
  std::string param = ct, f;
  if (n == "aten.add.Scalar")
    f = "x + " + fmtLiteral(alpha * other, ct);
  else if (n == "aten.sub.Scalar")
    f = "x - " + fmtLiteral(alpha * other, ct);
  else if (n == "aten.mul.Scalar")
    f = "x * " + fmtLiteral(other, ct);
  else if (n == "aten.div.Scalar")
    f = "x / " + fmtLiteral(other, ct);
  else {
    param = elemCType(in);
    f = ("x " + comparisonOperator(n) + " ").str() + fmtLiteral(other, param);
  }
  setDims(out, op, dimsOf(in));
  code += llvm::formatv(
      "  dynoc_k::unary({0}, {1}, {2}, []({4} x) {{ return {3}; });\n",
      name(out), name(in), numelOf(out), f, param);
  return success();
}

LogicalResult FuncEmitter::emitMatmul(Operation *op) {
  StringRef n = op->getName().getStringRef();
  Value out = op->getResult(0);
  // linear(x, w, b?) = x @ w^T + b ; mm(a, b) ; addmm(bias, a, b).
  Value a, b, bias;
  bool transB = n == "aten.linear";
  if (n == "aten.mm")
    a = op->getOperand(0), b = op->getOperand(1);
  else if (n == "aten.addmm")
    bias = op->getOperand(0), a = op->getOperand(1), b = op->getOperand(2);
  else {
    a = op->getOperand(0), b = op->getOperand(1);
    if (op->getNumOperands() > 2)
      bias = op->getOperand(2);
  }
  if (Operation *def = sourceOf(b).getDefiningOp())
    if (isFoldedTranspose(def)) {
      b = def->getOperand(0);
      transB = !transB;
    }
  const DimList &ad = dimsOf(a), &bd = dimsOf(b);
  if (ad.empty() || (ad.size() != 2 && n != "aten.linear") || bd.size() != 2)
    return op->emitError() << "dynoc build (cpu): '" << n
                           << "' expects 2-D operands (a 1-D or higher-rank "
                              "input to linear)";
  std::string K = ad.back(), M = product(ArrayRef(ad).drop_back());
  std::string N = transB ? bd[0] : bd[1], Kb = transB ? bd[1] : bd[0];
  if (!(isLiteral(K) && isLiteral(Kb)))
    require(K + " == " + Kb, op, "inner dims of the GEMM differ");
  else if (K != Kb)
    return op->emitError() << "dynoc build (cpu): inner dims " << K << " and "
                           << Kb << " of the GEMM differ";
  DimList computed(ad.begin(), ad.end() - 1);
  computed.push_back(N);
  setDims(out, op, computed);
  const DimList &outDims = dimsOf(out);
  double alpha = scalarAttr(op, "alpha", 1.0),
         beta = scalarAttr(op, "beta", 1.0);
  if (bias && beta != 0.0)
    code +=
        llvm::formatv("  {{ const int64_t s[] = {0}, shape[] = {1};\n"
                      "    dynoc_k::expand({2}, {3}, s, shape, {4}, {5}); }\n",
                      broadcastStrides(bias, outDims), braceList(outDims),
                      name(out), name(bias), outDims.size(), fmtFloat(beta));
  code += llvm::formatv(
      "  if (int rc = dynoc_k::gemm(false, {0}, {1}, {2}, {3}, {4}, "
      "{5}, {6}, {7}, {8})) return rc;\n",
      transB ? "true" : "false", M, N, K, fmtFloat(alpha), name(a), name(b),
      bias && beta != 0.0 ? "1.f" : "0.f", name(out));
  return success();
}

LogicalResult FuncEmitter::emitTranspose(Operation *op) {
  StringRef n = op->getName().getStringRef();
  Value in = op->getOperand(0);
  int64_t rank = typeShape(in).size();
  std::vector<int64_t> perm(rank);
  std::iota(perm.begin(), perm.end(), 0);
  auto norm = [&](int64_t d) { return d < 0 ? d + rank : d; };
  if (n == "aten.t") {
    if (rank == 2)
      std::swap(perm[0], perm[1]);
  } else if (n == "aten.transpose.int") {
    auto d0 = op->getAttrOfType<IntegerAttr>("dim0"),
         d1 = op->getAttrOfType<IntegerAttr>("dim1");
    if (!d0 || !d1)
      return op->emitError()
             << "dynoc build (cpu): transpose needs dim0 and dim1";
    if (norm(d0.getInt()) >= rank || norm(d1.getInt()) >= rank ||
        norm(d0.getInt()) < 0 || norm(d1.getInt()) < 0)
      return op->emitError()
             << "dynoc build (cpu): transpose dims out of range";
    std::swap(perm[norm(d0.getInt())], perm[norm(d1.getInt())]);
  } else {
    auto pd = op->getAttrOfType<DenseI64ArrayAttr>("dims");
    if (!pd || (int64_t)pd.size() != rank)
      return op->emitError()
             << "dynoc build (cpu): permute needs " << rank << " dims";
    for (int64_t i = 0; i < rank; ++i) {
      perm[i] = norm(pd[i]);
      if (perm[i] < 0 || perm[i] >= rank)
        return op->emitError() << "dynoc build (cpu): permute dim out of range";
    }
  }
  const DimList &inDims = dimsOf(in);
  DimList computed;
  std::vector<std::string> permText;
  for (int64_t d : perm) {
    computed.push_back(inDims[d]);
    permText.push_back(std::to_string(d));
  }
  setDims(op->getResult(0), op, computed);
  if (isFoldedTranspose(op))
    return success(); // the GEMM reads the operand with transB flipped
  code += llvm::formatv("  {{ const int64_t shape[] = {0}, perm[] = {1};\n"
                        "    dynoc_k::permute({2}, {3}, shape, perm, {4}); }\n",
                        braceList(inDims), braceList(permText),
                        name(op->getResult(0)), name(in), rank);
  return success();
}

LogicalResult FuncEmitter::emitCopy(Operation *op) {
  Value in = op->getOperand(0), out = op->getResult(0);
  StringRef n = op->getName().getStringRef();
  if (n == "aten.dropout" && scalarAttr(op, "train", 0.0) != 0.0)
    return op->emitError() << "dynoc build (cpu): dropout in training mode is "
                              "not supported";
  auto type = typeShape(out);
  std::string inNumel = numelOf(in);
  if (isSameShapeCopy(n) && dimsOf(in).size() == type.size()) {
    setDims(out, op, dimsOf(in));
  } else if (n == "aten.view_as") {
    // The other operand's dims, any number of them dynamic.
    Value other = op->getOperand(1);
    std::string otherNumel = numelOf(other);
    if (isLiteral(inNumel) && isLiteral(otherNumel) && inNumel != otherNumel)
      return op->emitError()
             << "dynoc build (cpu): 'aten.view_as' changes the element count";
    if (!(isLiteral(inNumel) && isLiteral(otherNumel)))
      require(inNumel + " == " + otherNumel, op,
              "the element count does not fit the new shape");
    setDims(out, op, dimsOf(other));
  } else {
    // A reshape: the dims of the result type, those capture gave as
    // expressions of the input dims (dynoc.sym_sizes), and at most one
    // other dynamic dim resolved from the element count.
    DimList computed;
    int dynamic = -1;
    SmallVector<std::string> known;
    StringRef attr = op->hasAttr("shape") ? "shape" : "size";
    for (auto [d, size] : llvm::enumerate(type)) {
      std::string sym = ShapedType::isDynamic(size) ? symSize(op, attr, d) : "";
      if (!sym.empty()) {
        computed.push_back(sym);
        known.push_back(sym);
        continue;
      }
      if (ShapedType::isDynamic(size)) {
        if (dynamic >= 0)
          return op->emitError()
                 << "dynoc build (cpu): '" << n
                 << "' has more than one dynamic dim in its result; the CPU "
                    "backend cannot resolve them yet";
        dynamic = d;
        computed.push_back("");
      } else {
        computed.push_back(std::to_string(size));
        known.push_back(computed.back());
      }
    }
    std::string knownNumel = product(known);
    if (dynamic >= 0) {
      require(knownNumel + " != 0 && " + inNumel + " % " + knownNumel + " == 0",
              op, "the element count does not fit the new shape");
      computed[dynamic] = resolved(inNumel + " / " + knownNumel);
    } else if (!isLiteral(inNumel)) {
      require(inNumel + " == " + knownNumel, op,
              "the element count does not fit the new shape");
    } else if (inNumel != knownNumel) {
      return op->emitError()
             << "dynoc build (cpu): '" << n << "' changes the element count";
    }
    setDims(out, op, computed);
  }
  if (elemCType(in) != elemCType(out))
    code += llvm::formatv("  for (int64_t i = 0; i < {2}; ++i)\n"
                          "    {0}[i] = {3}({1}[i]);\n",
                          name(out), name(in), numelOf(out), elemCType(out));
  else if (inOutput.count(out))
    code += llvm::formatv("  std::memcpy({0}, {1}, {2} * sizeof({3}));\n",
                          name(out), name(in), numelOf(out), elemCType(out));
  return success();
}

LogicalResult FuncEmitter::onlyFirstResult(Operation *op, StringRef what) {
  for (Value r : op->getResults().drop_front())
    if (needed(r))
      return op->emitError()
             << "dynoc build (cpu): '" << op->getName() << "': its " << what
             << " result is not supported yet";
  return success();
}

FailureOr<int64_t> FuncEmitter::normDim(Operation *op, int64_t dim,
                                        int64_t rank) {
  int64_t d = dim < 0 ? dim + rank : dim;
  if (d < 0 || d >= std::max<int64_t>(rank, 1))
    return op->emitError() << "dynoc build (cpu): dim " << dim
                           << " is out of range for rank " << rank;
  return d;
}

std::string FuncEmitter::affineToCpp(AffineExpr e) {
  if (auto c = e.dyn_cast<AffineConstantExpr>())
    return std::to_string(c.getValue());
  if (auto s = e.dyn_cast<AffineSymbolExpr>())
    return s.getPosition() < symbolDims.size() ? symbolDims[s.getPosition()]
                                               : std::string();
  auto bin = e.dyn_cast<AffineBinaryOpExpr>();
  if (!bin)
    return {};
  std::string l = affineToCpp(bin.getLHS()), r = affineToCpp(bin.getRHS());
  if (l.empty() || r.empty())
    return {};
  switch (e.getKind()) {
  case AffineExprKind::Add:
    return "(" + l + " + " + r + ")";
  case AffineExprKind::Mul:
    return "(" + l + " * " + r + ")";
  case AffineExprKind::FloorDiv: // sizes are not negative
    return "(" + l + " / " + r + ")";
  case AffineExprKind::CeilDiv:
    return "((" + l + " + " + r + " - 1) / " + r + ")";
  case AffineExprKind::Mod:
    return "(" + l + " % " + r + ")";
  default:
    return {};
  }
}

std::string FuncEmitter::symSize(Operation *op, StringRef attr, size_t k) {
  auto dict = op->getAttrOfType<DictionaryAttr>(dynoc::attrs::kSymSizes);
  auto map = dict ? dict.getAs<AffineMapAttr>(attr) : AffineMapAttr();
  if (!map || k >= map.getValue().getNumResults())
    return {};
  AffineExpr e = map.getValue().getResult(k);
  if (auto c = e.dyn_cast<AffineConstantExpr>(); c && c.getValue() == -1)
    return {};
  return affineToCpp(e);
}

LogicalResult FuncEmitter::emitExpand(Operation *op) {
  Value self = op->getOperand(0);
  const DimList &in = dimsOf(self);
  // The target dims: expand's size (-1 keeps the operand's dim), or
  // expand_as's other operand's dims.
  DimList target;
  if (auto ex = dyn_cast<aten::AtenExpandOp>(op)) {
    for (auto [k, s] : llvm::enumerate(ex.getSize()))
      target.push_back(s != -1 ? std::to_string(s) : symSize(op, "size", k));
  } else {
    target = dimsOf(op->getOperand(1));
  }
  if (target.size() < in.size())
    return op->emitError() << "dynoc build (cpu): expand to fewer dims";
  DimList computed;
  size_t lead = target.size() - in.size();
  for (size_t d = 0; d < target.size(); ++d) {
    if (d >= lead && (target[d].empty() || target[d] == in[d - lead]))
      computed.push_back(in[d - lead]);
    else if (target[d].empty())
      return op->emitError()
             << "dynoc build (cpu): expand with -1 in a new dim";
    else {
      // Only a dim of size 1 expands (ATen's rule).
      const std::string from = d >= lead ? in[d - lead] : "1";
      if (from != "1" && isLiteral(from) && isLiteral(target[d]))
        return op->emitError() << "dynoc build (cpu): dim " << d << " of size "
                               << from << " cannot expand to " << target[d];
      if (from != "1")
        require("(" + from + " == 1 || " + from + " == " + target[d] + ")", op,
                "a dim of size other than 1 cannot expand");
      computed.push_back(target[d]);
    }
  }
  Value out = op->getResult(0);
  setDims(out, op, computed);
  if (isIdentityExpand(op) && !inOutput.count(out))
    return success(); // shares the operand's buffer
  const DimList &outDims = dimsOf(out);
  code +=
      llvm::formatv("  {{ const int64_t s[] = {0}, shape[] = {1};\n"
                    "    dynoc_k::broadcast_copy({2}, {3}, s, shape, {4}); }\n",
                    broadcastStrides(self, outDims), braceList(outDims),
                    name(out), name(self), outDims.size());
  return success();
}

LogicalResult FuncEmitter::emitBmm(Operation *op) {
  Value a = op->getOperand(0), b = op->getOperand(1), out = op->getResult(0);
  const DimList &ad = dimsOf(a), &bd = dimsOf(b);
  if (ad.size() != 3 || bd.size() != 3)
    return op->emitError() << "dynoc build (cpu): bmm expects 3-D operands";
  if (!(isLiteral(ad[2]) && isLiteral(bd[1])))
    require(ad[2] + " == " + bd[1], op, "inner dims of the GEMM differ");
  setDims(out, op, {ad[0], ad[1], bd[2]});
  code += llvm::formatv(
      "  if (int rc = dynoc_k::bmm({0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}, "
      "{8})) return rc;\n",
      ad[0], ad[1], bd[2], ad[2], name(a), product({ad[1], ad[2]}), name(b),
      product({bd[1], bd[2]}), name(out));
  return success();
}

LogicalResult FuncEmitter::emitConvolution(Operation *op) {
  auto conv = cast<aten::AtenConvolutionOp>(op);
  if (conv.getTransposed())
    return emitConvTranspose(op);
  const DimList &in = dimsOf(conv.getInput()), &w = dimsOf(conv.getWeight());
  if (in.size() != 4 || w.size() != 4)
    return op->emitError() << "dynoc build (cpu): only 2-D convolution (NCHW) "
                              "is supported so far";
  const Conv2dWindow win = conv2dWindow(conv);
  const int64_t sh = win.sh, sw = win.sw, ph = win.ph, pw = win.pw, dh = win.dh,
                dw = win.dw;
  int64_t groups = conv.getGroups();
  if (!isLiteral(w[2]) || !isLiteral(w[3]) || groups < 1)
    return op->emitError() << "dynoc build (cpu): convolution needs a static "
                              "kernel size and groups >= 1";
  int64_t R = std::stoll(w[2]), S = std::stoll(w[3]);
  auto outDim = [&](const std::string &x, int64_t p, int64_t d, int64_t k,
                    int64_t s) {
    std::string e = "(" + x + " + " + std::to_string(2 * p - d * (k - 1) - 1) +
                    ") / " + std::to_string(s) + " + 1";
    return isLiteral(x) ? std::to_string(
                              (std::stoll(x) + 2 * p - d * (k - 1) - 1) / s + 1)
                        : resolved(e);
  };
  std::string OH = outDim(in[2], ph, dh, R, sh),
              OW = outDim(in[3], pw, dw, S, sw);
  require(product({w[1], std::to_string(groups)}) + " == " + in[1], op,
          "input channels do not match the weight");
  Value out = op->getResult(0);
  setDims(out, op, {in[0], w[0], OH, OW});
  // Scratch for the columns (and, with one group, the GEMM's result).
  std::string col =
      groups == 1
          ? scratch(product({isLiteral(w[1]) && isLiteral(w[0])
                                 ? std::to_string(std::stoll(w[1]) * R * S +
                                                  std::stoll(w[0]))
                                 : "(" + w[1] + " * " + std::to_string(R * S) +
                                       " + " + w[0] + ")",
                             in[0], OH, OW, "4"}))
          : scratch(product({w[1], std::to_string(R * S), OH, OW, "4"}));
  Value bias = conv.getBias();
  // Convolutions go to oneDNN's primitive (cached per call site; grouped and
  // depthwise ones to its grouped kernels); any shape oneDNN refuses falls
  // back to im2col + GEMM.
  {
    // Named after the graph: a bundle prints several graphs into one file.
    std::string site = base + "_conv_site_" + std::to_string(next++);
    globals += "static dynoc_k::ConvSite " + site + ";\n";
    code += llvm::formatv(
        "  if (int rc = dynoc_k::conv2d_dnnl({0}, {1}, {2}, "
        "{3}, {4}, {5}, {6}, "
        "{7}, {8}, {9}, {10}, {11}, {12}, {13}, {14}, {15}, "
        "{16}, {17}, {18}, {19}, {20}); rc > 0) "
        "return rc;\n  else if (rc < 0)\n",
        site, name(out), name(conv.getInput()), name(conv.getWeight()),
        bias ? name(bias) : "nullptr", in[0], in[1], in[2], in[3], w[0], R, S,
        dimsOf(out)[2], dimsOf(out)[3], sh, sw, ph, pw, groups, dh, dw);
  }
  code += llvm::formatv(
      "  if (int rc = dynoc_k::conv2d({0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}, "
      "{8}, {9}, {10}, {11}, {12}, {13}, {14}, {15}, {16}, {17}, {18}, {19}, "
      "{20})) return rc;\n",
      name(out), name(conv.getInput()), name(conv.getWeight()),
      bias ? name(bias) : "nullptr", in[0], in[1], in[2], in[3], w[0], R, S,
      dimsOf(out)[2], dimsOf(out)[3], sh, sw, ph, pw, dh, dw, groups, col);
  return success();
}

LogicalResult FuncEmitter::emitBatchNorm(Operation *op) {
  Value input = op->getOperand(0), weight, bias, mean, var;
  double eps;
  if (auto bn = dyn_cast<aten::AtenNativeBatchNormOp>(op)) {
    if (bn.getTraining())
      return op->emitError() << "dynoc build (cpu): batch norm in training "
                                "mode is not supported (call model.eval())";
    weight = bn.getWeight(), bias = bn.getBias(), mean = bn.getRunningMean(),
    var = bn.getRunningVar(), eps = bn.getEps().convertToDouble();
  } else {
    auto legit = cast<aten::NativeBatchNormLegitNoTrainingOp>(op);
    weight = legit.getWeight(), bias = legit.getBias(),
    mean = legit.getRunningMean(), var = legit.getRunningVar(),
    eps = legit.getEps().convertToDouble();
  }
  if (!mean || !var)
    return op->emitError()
           << "dynoc build (cpu): batch norm without running statistics";
  if (failed(onlyFirstResult(op, "saved mean/invstd")))
    return failure();
  const DimList &in = dimsOf(input);
  if (in.size() < 2)
    return op->emitError() << "dynoc build (cpu): batch norm needs rank >= 2";
  Value out = op->getResult(0);
  setDims(out, op, in);
  code += llvm::formatv("  dynoc_k::batch_norm({0}, {1}, {2}, {3}, {4}, {5}, "
                        "{6}, {7}, {8}, {9});\n",
                        name(out), name(input), name(mean), name(var),
                        weight ? name(weight) : "nullptr",
                        bias ? name(bias) : "nullptr", in[0], in[1],
                        product(ArrayRef(in).drop_front(2)),
                        llvm::formatv("{0:e17}", eps).str());
  return success();
}

LogicalResult FuncEmitter::emitMaxPool(Operation *op) {
  auto mp = cast<aten::AtenMaxPool2dWithIndicesOp>(op);
  if (failed(onlyFirstResult(op, "indices")))
    return failure();
  if (mp.getCeilMode() && *mp.getCeilMode())
    return op->emitError() << "dynoc build (cpu): max_pool2d with ceil_mode "
                              "is not supported yet";
  const DimList &in = dimsOf(mp.getSelf());
  if (in.size() != 4)
    return op->emitError() << "dynoc build (cpu): max_pool2d expects NCHW";
  auto pair = [&](std::optional<ArrayRef<int64_t>> v, int64_t dflt, int i) {
    return !v || v->empty() ? dflt : (*v)[v->size() == 1 ? 0 : i];
  };
  ArrayRef<int64_t> k = mp.getKernelSize();
  int64_t kh = k[0], kw = k.size() > 1 ? k[1] : k[0];
  int64_t sh = pair(mp.getStride(), kh, 0), sw = pair(mp.getStride(), kw, 1);
  int64_t ph = pair(mp.getPadding(), 0, 0), pw = pair(mp.getPadding(), 0, 1);
  int64_t dh = pair(mp.getDilation(), 1, 0), dw = pair(mp.getDilation(), 1, 1);
  auto outDim = [&](const std::string &x, int64_t p, int64_t d, int64_t kk,
                    int64_t s) {
    if (isLiteral(x))
      return std::to_string((std::stoll(x) + 2 * p - d * (kk - 1) - 1) / s + 1);
    return resolved("(" + x + " + " + std::to_string(2 * p - d * (kk - 1) - 1) +
                    ") / " + std::to_string(s) + " + 1");
  };
  Value out = op->getResult(0);
  setDims(out, op,
          {in[0], in[1], outDim(in[2], ph, dh, kh, sh),
           outDim(in[3], pw, dw, kw, sw)});
  const DimList &o = dimsOf(out);
  code += llvm::formatv(
      "  dynoc_k::max_pool2d({0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}, {8}, {9}, "
      "{10}, {11}, {12}, {13}, {14});\n",
      name(out), name(mp.getSelf()), product({in[0], in[1]}), in[2], in[3],
      o[2], o[3], kh, kw, sh, sw, ph, pw, dh, dw);
  return success();
}

LogicalResult FuncEmitter::emitLayerNorm(Operation *op) {
  auto ln = cast<aten::AtenNativeLayerNormOp>(op);
  if (failed(onlyFirstResult(op, "mean/rstd")))
    return failure();
  const DimList &in = dimsOf(ln.getInput());
  size_t k = ln.getNormalizedShape().size();
  if (k == 0 || k > in.size())
    return op->emitError() << "dynoc build (cpu): bad normalized_shape";
  Value out = op->getResult(0);
  setDims(out, op, in);
  code += llvm::formatv(
      "  dynoc_k::layer_norm({0}, {1}, {2}, {3}, {4}, {5}, {6});\n", name(out),
      name(ln.getInput()), ln.getWeight() ? name(ln.getWeight()) : "nullptr",
      ln.getBias() ? name(ln.getBias()) : "nullptr",
      product(ArrayRef(in).drop_back(k)), product(ArrayRef(in).take_back(k)),
      llvm::formatv("{0:e17}", ln.getEps().convertToDouble()).str());
  return success();
}

LogicalResult FuncEmitter::emitSoftmax(Operation *op) {
  Value in = op->getOperand(0), out = op->getResult(0);
  if (op->getAttrOfType<BoolAttr>("half_to_float") &&
      op->getAttrOfType<BoolAttr>("half_to_float").getValue())
    return op->emitError() << "dynoc build (cpu): half_to_float softmax";
  const DimList &d = dimsOf(in);
  auto dim =
      normDim(op, op->getAttrOfType<IntegerAttr>("dim").getInt(), d.size());
  if (failed(dim))
    return failure();
  setDims(out, op, d);
  ArrayRef<std::string> all(d);
  code += llvm::formatv(
      "  dynoc_k::softmax({0}, {1}, {2}, {3}, {4}, {5});\n", name(out),
      name(in), product(all.take_front(*dim)), d.empty() ? "1" : d[*dim],
      d.empty() ? "1" : product(all.drop_front(*dim + 1)),
      op->getName().getStringRef() == "aten._log_softmax" ? "true" : "false");
  return success();
}

/// sum, mean, amax, amin over one run of adjacent dims (all dims when the op
/// names none): the input is viewed as (outer, n, inner).
LogicalResult FuncEmitter::emitReduction(Operation *op) {
  StringRef n = op->getName().getStringRef();
  Value in = op->getOperand(0), out = op->getResult(0);
  if (auto dt = op->getAttrOfType<TypeAttr>("dtype"))
    if (!dt.getValue().isF32())
      return op->emitError() << "dynoc build (cpu): '" << n << "' with dtype "
                             << dt.getValue() << " is not supported yet";
  const DimList &d = dimsOf(in);
  int64_t rank = d.size();
  std::vector<bool> reduced(rank, false);
  auto dimAttr = op->getAttrOfType<DenseI64ArrayAttr>("dim");
  if (!dimAttr || dimAttr.empty()) {
    reduced.assign(rank, true);
  } else {
    for (int64_t x : dimAttr.asArrayRef()) {
      auto dim = normDim(op, x, rank);
      if (failed(dim))
        return failure();
      reduced[*dim] = true;
    }
  }
  int64_t first = -1, last = -1;
  for (int64_t i = 0; i < rank; ++i)
    if (reduced[i]) {
      if (first < 0)
        first = i;
      else if (last != i - 1)
        return op->emitError()
               << "dynoc build (cpu): '" << n
               << "' over dims that are not adjacent is not supported yet";
      last = i;
    }
  bool keepdim = op->getAttrOfType<BoolAttr>("keepdim") &&
                 op->getAttrOfType<BoolAttr>("keepdim").getValue();
  DimList outDims;
  for (int64_t i = 0; i < rank; ++i)
    if (!reduced[i])
      outDims.push_back(d[i]);
    else if (keepdim)
      outDims.push_back("1");
  setDims(out, op, outDims);
  ArrayRef<std::string> all(d);
  std::string outer = first < 0 ? product(all) : product(all.take_front(first));
  std::string len =
      first < 0 ? "1" : product(all.slice(first, last - first + 1));
  std::string inner = first < 0 ? "1" : product(all.drop_front(last + 1));
  int kind = n.startswith("aten.sum")    ? 0
             : n.startswith("aten.mean") ? 1
             : n == "aten.amax"          ? 2
                                         : 3;
  code += llvm::formatv("  dynoc_k::reduce({0}, {1}, {2}, {3}, {4}, {5});\n",
                        name(out), name(in), outer, len, inner, kind);
  return success();
}

/// stack: a cat along a new dim, each input one slice of it.
LogicalResult FuncEmitter::emitStack(Operation *op) {
  auto stack = cast<aten::AtenStackOp>(op);
  Value out = op->getResult(0);
  auto tensors = stack.getTensors();
  if (tensors.empty())
    return op->emitError() << "dynoc build (cpu): stack of nothing";
  DimList d = dimsOf(tensors.front());
  for (Value t : tensors)
    if (dimsOf(t).size() != d.size())
      return op->emitError() << "dynoc build (cpu): stack of different ranks";
  auto dim = normDim(op, stack.getDim() ? *stack.getDim() : 0, d.size() + 1);
  if (failed(dim))
    return failure();
  DimList outDims = d;
  outDims.insert(outDims.begin() + *dim, std::to_string(tensors.size()));
  setDims(out, op, outDims);
  ArrayRef<std::string> all(d);
  std::string outer = product(all.take_front(*dim)),
              inner = product(all.drop_front(*dim));
  for (auto [k, t] : llvm::enumerate(tensors))
    code +=
        llvm::formatv("  dynoc_k::place({0}, {1}, {2}, {3}, {4}, {5}, 1);\n",
                      name(out), name(t), outer, tensors.size(), inner, k);
  return success();
}

/// unbind: one result per index along `dim`, that dim removed.
LogicalResult FuncEmitter::emitUnbind(Operation *op) {
  auto unbind = cast<aten::AtenUnbindIntOp>(op);
  const DimList &d = dimsOf(unbind.getSelf());
  auto dim = normDim(op, unbind.getDim() ? *unbind.getDim() : 0, d.size());
  if (failed(dim))
    return failure();
  ArrayRef<std::string> all(d);
  std::string outer = product(all.take_front(*dim)),
              inner = product(all.drop_front(*dim + 1));
  DimList rd = d;
  rd.erase(rd.begin() + *dim);
  for (auto [i, r] : llvm::enumerate(op->getResults())) {
    setDims(r, op, rd);
    if (!needed(r))
      continue;
    code += llvm::formatv(
        "  dynoc_k::slice({0}, {1}, {2}, {3}, {4}, {5}, 1);\n", name(r),
        name(unbind.getSelf()), outer, d[*dim], inner, i);
  }
  return success();
}

LogicalResult FuncEmitter::emitSplit(Operation *op) {
  // split.Tensor and unsafe_split.Tensor: the same operands and attributes.
  Value self = op->getOperand(0);
  const DimList &d = dimsOf(self);
  auto dim = normDim(op, int64_t(scalarAttr(op, "dim", 0)), d.size());
  if (failed(dim))
    return failure();
  int64_t size = int64_t(scalarAttr(op, "split_size", 1));
  ArrayRef<std::string> all(d);
  std::string outer = product(all.take_front(*dim)),
              inner = product(all.drop_front(*dim + 1));
  for (auto [i, r] : llvm::enumerate(op->getResults())) {
    auto rt = typeShape(r);
    std::string len =
        ShapedType::isDynamic(rt[*dim])
            ? resolved("std::min<int64_t>(" + std::to_string(size) + ", " +
                       d[*dim] + " - " + std::to_string(i * size) + ")")
            : std::to_string(rt[*dim]);
    DimList rd = d;
    rd[*dim] = len;
    setDims(r, op, rd);
    if (!needed(r))
      continue;
    code += llvm::formatv(
        "  dynoc_k::slice({0}, {1}, {2}, {3}, {4}, {5}, {6});\n", name(r),
        name(self), outer, d[*dim], inner, i * size, len);
  }
  return success();
}

LogicalResult FuncEmitter::emitFusionGroup(Operation *op) {
  auto group = cast<dynoc::FusionGroupOp>(op);
  Block &body = group.getBody().front();
  for (auto [arg, in] : llvm::zip(body.getArguments(), group.getInputs())) {
    names[arg] = name(in);
    dims[arg] = dimsOf(in);
    if (scalarArgs.count(in))
      scalarArgs.insert(arg);
  }
  Value out = group.getResult();
  auto ops = llvm::make_pointer_range(body.without_terminator());
  SmallVector<Operation *> chain(ops.begin(), ops.end());
  for (Operation *inner : chain)
    if (failed(checkTypes(inner)))
      return failure();
  Value current; // the chain's value entering the loop, if an anchor made it
  if (group.getKind() == "epilogue") {
    Operation *anchor = chain.front();
    auto it = table().find(anchor->getName().getStringRef());
    if (it == table().end())
      return anchor->emitError()
             << "dynoc build (cpu): op '" << anchor->getName()
             << "' is not supported by the CPU backend yet";
    names[anchor->getResult(0)] = name(out);
    if (failed((this->*(it->second))(anchor)))
      return failure();
    current = anchor->getResult(0);
    setDims(out, op, dimsOf(current));
    chain.erase(chain.begin());
  } else {
    // The group's shape is that of an input of its result type, or static.
    Value like;
    for (Value in : group.getInputs())
      if (in.getType() == out.getType())
        like = in;
    if (like)
      setDims(out, op, dimsOf(like));
    else if (out.getType().cast<RankedTensorType>().hasStaticShape())
      setDims(out, op, DimList(typeShape(out).size(), "0"));
    else
      return op->emitError() << "dynoc build (cpu): cannot size this fusion "
                                "group (no input has its dynamic shape)";
  }
  const DimList &outDims = dimsOf(out);
  size_t rank = outDims.size();
  // Loop inputs: pointers and their strides over the group's shape.
  std::vector<std::string> ptrs, strides;
  llvm::DenseMap<Value, std::string> expr;
  auto input = [&](Value v, std::string s) {
    ptrs.push_back(name(v));
    strides.push_back(std::move(s));
    return "v[" + std::to_string(ptrs.size() - 1) + "]";
  };
  // An input must broadcast to the group's shape; what the types leave open
  // is checked at run time.
  auto checkBroadcast = [&](Value v, Operation *user) -> LogicalResult {
    const DimList &d = dimsOf(v);
    if (d.size() > rank)
      return op->emitError() << "dynoc build (cpu): a fused input has more "
                                "dims than the group's result";
    for (size_t i = 0; i < d.size(); ++i) {
      const std::string &in = d[i], &o = outDims[rank - d.size() + i];
      if (in == o || in == "1")
        continue;
      if (isLiteral(in) && isLiteral(o))
        return op->emitError() << "dynoc build (cpu): a fused input of dim "
                               << in << " does not broadcast to " << o;
      require(in + " == " + o + " || " + in + " == 1", user,
              "the operands do not broadcast in dim " +
                  std::to_string(rank - d.size() + i));
    }
    return success();
  };
  bool broadcastError = false;
  Operation *user = nullptr; // the op whose operands are being read
  auto operand = [&](Value v) {
    auto it = expr.find(v);
    if (it != expr.end())
      return it->second;
    if (failed(checkBroadcast(v, user)))
      broadcastError = true;
    return expr[v] = input(v, broadcastStrides(v, outDims));
  };
  if (current)
    expr[current] = input(current, broadcastStrides(current, outDims));
  std::string stmts;
  std::string prologue;
  unsigned t = 0;
  for (Operation *inner : chain) {
    StringRef n = inner->getName().getStringRef();
    std::string e;
    user = inner;
    if (inner->getNumResults() == 3) { // eval-mode batch norm
      Value mean, var, w, b;
      if (auto bn = dyn_cast<aten::AtenNativeBatchNormOp>(inner)) {
        w = bn.getWeight(), b = bn.getBias(), mean = bn.getRunningMean(),
        var = bn.getRunningVar();
      } else {
        auto legit = cast<aten::NativeBatchNormLegitNoTrainingOp>(inner);
        w = legit.getWeight(), b = legit.getBias(),
        mean = legit.getRunningMean(), var = legit.getRunningVar();
      }
      double eps = inner->getAttrOfType<FloatAttr>("eps").getValueAsDouble();
      if (rank < 2 || !mean || !var)
        return inner->emitError() << "dynoc build (cpu): batch norm needs "
                                     "rank >= 2 and running statistics";
      std::string C = outDims[1];
      std::string scale = scratch(product({C, "4"})),
                  shift = scratch(product({C, "4"}));
      prologue += llvm::formatv(
          "  dynoc_k::bn_scale_shift({0}, {1}, {2}, {3}, {4}, {5}, {6}, "
          "{7});\n",
          scale, shift, name(mean), name(var), w ? name(w) : "nullptr",
          b ? name(b) : "nullptr", C, llvm::formatv("{0:e17}", eps).str());
      DimList channel(rank, "0");
      channel[1] = "1";
      ptrs.push_back(scale);
      strides.push_back(braceList(channel));
      std::string s = "v[" + std::to_string(ptrs.size() - 1) + "]";
      ptrs.push_back(shift);
      strides.push_back(braceList(channel));
      std::string h = "v[" + std::to_string(ptrs.size() - 1) + "]";
      e = operand(inner->getOperand(0)) + " * " + s + " + " + h;
    } else if (inner->getNumOperands() == 1) {
      std::string a = operand(inner->getOperand(0));
      double alpha = scalarAttr(inner, "alpha", 1.0);
      std::string c = fmtFloat(scalarAttr(inner, "other", 0.0));
      if (n == "aten.relu")
        e = a + " > 0.f ? " + a + " : 0.f";
      else if (n == "aten.neg")
        e = "-" + a;
      else if (n == "aten.abs")
        e = "std::fabs(" + a + ")";
      else if (n == "aten.sqrt")
        e = "std::sqrt(" + a + ")";
      else if (n == "aten.rsqrt")
        e = "1.f / std::sqrt(" + a + ")";
      else if (n == "aten.add.Scalar")
        e = a + " + " + fmtFloat(alpha) + " * " + c;
      else if (n == "aten.sub.Scalar")
        e = a + " - " + fmtFloat(alpha) + " * " + c;
      else if (n == "aten.mul.Scalar")
        e = a + " * " + c;
      else if (n == "aten.div.Scalar")
        e = a + " / " + c;
      else if (n == "aten.hardtanh")
        e = hardtanhExpr(inner, a, "float");
    } else if (inner->getNumOperands() == 2) {
      std::string a = operand(inner->getOperand(0)),
                  b = operand(inner->getOperand(1));
      double alpha = scalarAttr(inner, "alpha", 1.0);
      std::string sb = alpha == 1.0 ? b : fmtFloat(alpha) + " * " + b;
      if (n == "aten.add.Tensor")
        e = a + " + " + sb;
      else if (n == "aten.sub.Tensor")
        e = a + " - " + sb;
      else if (n == "aten.mul.Tensor")
        e = a + " * " + b;
      else if (n == "aten.div.Tensor")
        e = a + " / " + b;
      else if (n == "aten.maximum")
        e = a + " > " + b + " || " + a + " != " + a + " ? " + a + " : " + b;
      else if (n == "aten.minimum")
        e = a + " < " + b + " || " + a + " != " + a + " ? " + a + " : " + b;
    }
    if (e.empty())
      return inner->emitError() << "dynoc build (cpu): '" << n
                                << "' cannot be part of a fused loop";
    std::string tn = "t" + std::to_string(t++);
    stmts += "        const float " + tn + " = " + e + ";\n";
    expr[inner->getResult(0)] = tn;
  }
  if (broadcastError)
    return failure();
  if (chain.empty())
    return success(); // an epilogue group with nothing after the anchor
  std::string result = expr[body.getTerminator()->getOperand(0)];
  // The loop is written out here rather than in a template so that the inner
  // loop reads each operand as it is (dense, or one value per row) and
  // vectorizes.
  code += prologue;
  std::string loop = "  {\n";
  for (auto [k, st] : llvm::enumerate(strides))
    loop += llvm::formatv("    const int64_t st{0}[] = {1};\n", k, st).str();
  loop += "    const int64_t shape[] = " + braceList(outDims) + ";\n";
  if (rank == 0) {
    std::string body = stmts;
    for (size_t k = 0; k < ptrs.size(); ++k)
      body = "      const float x" + std::to_string(k) + " = float(" + ptrs[k] +
             "[0]);\n" + body;
    loop += "    {\n" + body + "      " + name(out) + "[0] = " + result +
            ";\n    }\n  }\n";
  } else {
    std::string inner = outDims.back(), n = product(outDims);
    loop += llvm::formatv("    const int64_t inner = {0};\n"
                          "    const int64_t outer = inner ? {1} / inner : 0;\n"
                          "#pragma omp parallel for if ({1} > "
                          "dynoc_k::kParallelGrain)\n"
                          "    for (int64_t row = 0; row < outer; ++row) {{\n",
                          inner, n)
                .str();
    for (size_t k = 0; k < ptrs.size(); ++k)
      loop += llvm::formatv("      int64_t off{0} = 0;\n", k).str();
    loop += "      for (int64_t d = " + std::to_string(rank) +
            " - 2, rem = row; d >= 0; --d) {\n"
            "        int64_t idx = rem % shape[d];\n        rem /= shape[d];\n";
    for (size_t k = 0; k < ptrs.size(); ++k)
      loop += llvm::formatv("        off{0} += idx * st{0}[d];\n", k).str();
    loop += "      }\n";
    std::string reads;
    for (auto [k, ptr] : llvm::enumerate(ptrs)) {
      loop += llvm::formatv("      const auto *p{0} = {1} + off{0};\n", k, ptr)
                  .str();
      // The inner stride: 0 reads one value per row, 1 a dense row.
      std::string last =
          strides[k].substr(strides[k].rfind(", ") == std::string::npos
                                ? 1
                                : strides[k].rfind(", ") + 2);
      last.pop_back(); // the closing brace
      if (last == "0")
        reads +=
            llvm::formatv("        const float x{0} = float(p{0}[0]);\n", k)
                .str();
      else if (last == "1")
        reads +=
            llvm::formatv("        const float x{0} = float(p{0}[i]);\n", k)
                .str();
      else
        reads +=
            llvm::formatv(
                "        const float x{0} = float(p{0}[i * st{0}[{1}]]);\n", k,
                rank - 1)
                .str();
    }
    loop += "      float *dst = " + name(out) +
            " + row * inner;\n#pragma omp simd\n"
            "      for (int64_t i = 0; i < inner; ++i) {\n" +
            reads + stmts + "        dst[i] = " + result +
            ";\n      }\n    }\n  }\n";
  }
  // Operand references in the statements are x0, x1, ... rather than v[k].
  for (size_t k = ptrs.size(); k-- > 0;) {
    std::string from = "v[" + std::to_string(k) + "]",
                to = "x" + std::to_string(k);
    for (size_t pos; (pos = loop.find(from)) != std::string::npos;)
      loop.replace(pos, from.size(), to);
  }
  code += loop;
  return success();
}

LogicalResult FuncEmitter::emitEmbedding(Operation *op) {
  auto emb = cast<aten::AtenEmbeddingOp>(op);
  const DimList &w = dimsOf(emb.getWeight()), &idx = dimsOf(emb.getIndices());
  auto it =
      emb.getIndices().getType().cast<RankedTensorType>().getElementType();
  if (w.size() != 2 || !it.isInteger(64))
    return op->emitError() << "dynoc build (cpu): embedding needs a 2-D table "
                              "and int64 indices";
  DimList computed = idx;
  computed.push_back(w[1]);
  Value out = op->getResult(0);
  setDims(out, op, computed);
  code += llvm::formatv("  if (int rc = dynoc_k::embedding({0}, {1}, {2}, {3}, "
                        "{4}, {5})) return rc;\n",
                        name(out), name(emb.getWeight()),
                        name(emb.getIndices()), product(idx), w[0], w[1]);
  return success();
}

LogicalResult FuncEmitter::emitArange(Operation *op) {
  Value out = op->getResult(0);
  auto num = [&](StringRef n, double dflt) { return scalarAttr(op, n, dflt); };
  double start = num("start", 0), end = num("end", 0), step = num("step", 1);
  if (step == 0)
    return op->emitError() << "dynoc build (cpu): arange with step 0";
  std::string symEnd = symSize(op, "end", 0);
  if (!symEnd.empty()) {
    // An end that depends on the input dims (dynoc.sym_sizes).
    if (start != std::floor(start) || step != std::floor(step) || step <= 0)
      return op->emitError() << "dynoc build (cpu): arange with a symbolic "
                                "end needs an integral start and step";
    std::string n = llvm::formatv("std::max<int64_t>(0, ({0} - {1} + {2} - 1) "
                                  "/ {2})",
                                  symEnd, int64_t(start), int64_t(step));
    setDims(out, op, {resolved(n)});
  } else {
    int64_t n = std::max<int64_t>(0, int64_t(std::ceil((end - start) / step)));
    setDims(out, op, {std::to_string(n)});
  }
  code += llvm::formatv("  dynoc_k::arange({0}, {1}, {2:e17}, {3:e17});\n",
                        name(out), dimsOf(out)[0], start, step);
  return success();
}

/// full, ones, zeros and their _like forms: every element one value
/// (arange's kernel with step 0).
LogicalResult FuncEmitter::emitFull(Operation *op) {
  Value out = op->getResult(0);
  StringRef n = op->getName().getStringRef();
  if (n.endswith("_like") || n == "aten.zero") {
    setDims(out, op, dimsOf(op->getOperand(0)));
  } else if (n == "aten.scalar_tensor") {
    setDims(out, op, {});
  } else {
    auto size = op->getAttrOfType<DenseI64ArrayAttr>("size");
    if (!size)
      return op->emitError()
             << "dynoc build (cpu): '" << n << "' without a size";
    DimList d;
    for (int64_t x : size.asArrayRef())
      d.push_back(std::to_string(x));
    setDims(out, op, d);
  }
  double value = n.contains("ones")           ? 1.0
                 : n == "aten.scalar_tensor"  ? scalarAttr(op, "s", 0)
                 : n.contains("zero")         ? 0.0
                 : n.startswith("aten.empty") ? 0.0 // any value will do
                                              : scalarAttr(op, "fill_value", 0);
  // fmtLiteral spells infinities and NaN (a mask's -inf fill) as C++ can.
  code += llvm::formatv("  dynoc_k::arange({0}, {1}, {2}, 0.0);\n", name(out),
                        numelOf(out), fmtLiteral(value, "double"));
  return success();
}

/// where.self(c, a, b) and masked_fill.Scalar(x, mask, v) = where(mask, v, x).
LogicalResult FuncEmitter::emitWhere(Operation *op) {
  Value out = op->getResult(0);
  std::string ct = elemCType(out);
  bool maskedFill = op->getName().getStringRef() == "aten.masked_fill.Scalar";
  Value cond = op->getOperand(maskedFill ? 1 : 0);
  if (!elementTypeOf(cond).isInteger(1))
    return op->emitError() << "dynoc build (cpu): '" << op->getName()
                           << "' needs a bool condition";
  SmallVector<Value> operands = {cond};
  std::string a, b, pre;
  if (maskedFill) {
    if (!op->getAttr("value"))
      return op->emitError() << "dynoc build (cpu): masked_fill needs a value";
    operands.push_back(op->getOperand(0));
    pre = "    const " + ct + " fill[] = {" +
          fmtLiteral(scalarAttr(op, "value", 0), ct) + "};\n";
    a = "fill";
    b = name(op->getOperand(0));
  } else {
    operands.append({op->getOperand(1), op->getOperand(2)});
    a = name(op->getOperand(1));
    b = name(op->getOperand(2));
  }
  setDims(out, op, broadcastDims(op, operands));
  const DimList &outDims = dimsOf(out);
  std::string zeros = braceList(DimList(outDims.size(), "0"));
  std::string as = maskedFill ? zeros : broadcastStrides(operands[1], outDims),
              bs = broadcastStrides(operands.back(), outDims);
  code += llvm::formatv(
      "  {{\n{0}"
      "    const int64_t cs[] = {1}, as[] = {2}, bs[] = {3}, shape[] = {4};\n"
      "    dynoc_k::where({5}, {6}, cs, {7}, as, {8}, bs, shape, {9}); }\n",
      pre, broadcastStrides(cond, outDims), as, bs, braceList(outDims),
      name(out), name(cond), a, b, outDims.size());
  return success();
}

/// argmax/argmin over one dim (kept as 1 with keepdim) or over all elements.
LogicalResult FuncEmitter::emitArgReduce(Operation *op) {
  Value in = op->getOperand(0), out = op->getResult(0);
  const DimList &d = dimsOf(in);
  auto dimAttr = op->getAttrOfType<IntegerAttr>("dim");
  bool keepdim = scalarAttr(op, "keepdim", 0) != 0;
  std::string outer = "1", n = numelOf(in), inner = "1";
  DimList computed;
  if (dimAttr && !d.empty()) {
    auto dim = normDim(op, dimAttr.getInt(), d.size());
    if (failed(dim))
      return failure();
    ArrayRef<std::string> all(d);
    outer = product(all.take_front(*dim));
    n = d[*dim];
    inner = product(all.drop_front(*dim + 1));
    computed = d;
    if (keepdim)
      computed[*dim] = "1";
    else
      computed.erase(computed.begin() + *dim);
  } else if (keepdim) {
    computed = DimList(d.size(), "1");
  }
  setDims(out, op, computed);
  bool max = op->getName().getStringRef() == "aten.argmax";
  code += llvm::formatv("  if (int rc = dynoc_k::argreduce({0}, {1}, {2}, {3}, "
                        "{4}, {5})) return rc;\n",
                        name(out), name(in), outer, n, inner,
                        max ? "true" : "false");
  return success();
}

/// index.Tensor: advanced indexing with int64 index tensors. The index
/// tensors broadcast to one shape B; their positions in the input either form
/// one run (the result is the dims before it, B, the dims after) or not (B
/// first, then the other dims), as in ATen.
LogicalResult FuncEmitter::emitIndex(Operation *op) {
  auto ix = cast<aten::AtenIndexTensorOp>(op);
  Value in = ix.getSelf(), out = op->getResult(0);
  const DimList &d = dimsOf(in);
  int64_t rank = d.size();
  // Input dim of each index tensor: the positions not listed as None.
  std::set<int64_t> none;
  if (auto n = ix.getIndicesNoneAttr())
    none.insert(n.asArrayRef().begin(), n.asArrayRef().end());
  SmallVector<Value> idx(ix.getIndices().begin(), ix.getIndices().end());
  SmallVector<int64_t> pos;
  for (int64_t p = 0; (int64_t)pos.size() < (int64_t)idx.size(); ++p)
    if (!none.count(p))
      pos.push_back(p);
  if (idx.empty() || pos.back() >= rank)
    return op->emitError() << "dynoc build (cpu): index.Tensor with "
                           << idx.size() << " index tensors on rank " << rank;
  for (Value v : idx)
    if (!elementTypeOf(v).isInteger(64))
      return op->emitError()
             << "dynoc build (cpu): index.Tensor with a " << elementTypeOf(v)
             << " index (a mask gives a result whose size depends on the "
                "data) is not supported yet";
  // B: the index tensors' dims broadcast from the right.
  size_t bRank = 0;
  for (Value v : idx)
    bRank = std::max(bRank, dimsOf(v).size());
  DimList b(bRank, "1");
  for (Value v : idx) {
    const DimList &vd = dimsOf(v);
    for (size_t i = 0; i < vd.size(); ++i) {
      std::string &o = b[bRank - vd.size() + i];
      if (vd[i] == "1" || vd[i] == o)
        continue;
      if (o != "1" && isLiteral(o) && isLiteral(vd[i]))
        return op->emitError() << "dynoc build (cpu): index tensors of dims "
                               << o << " and " << vd[i] << " do not broadcast";
      if (o != "1")
        require(o + " == " + vd[i], op, "the index tensors do not broadcast");
      o = vd[i];
    }
  }
  bool adjacent = pos.back() - pos.front() + 1 == (int64_t)pos.size();
  int64_t at = adjacent ? pos.front() : 0; // where B goes in the result
  DimList inStrides(rank);
  for (int64_t k = rank - 1; k >= 0; --k)
    inStrides[k] = product(ArrayRef<std::string>(d).drop_front(k + 1));
  DimList computed, outInStride;
  auto isIndexed = [&](int64_t k) { return llvm::is_contained(pos, k); };
  int64_t k = 0;
  for (; k < at; ++k)
    if (!isIndexed(k)) {
      computed.push_back(d[k]);
      outInStride.push_back(inStrides[k]);
    }
  size_t bStart = computed.size();
  for (auto &bd : b) {
    computed.push_back(bd);
    outInStride.push_back("0");
  }
  for (; k < rank; ++k)
    if (!isIndexed(k)) {
      computed.push_back(d[k]);
      outInStride.push_back(inStrides[k]);
    }
  setDims(out, op, computed);
  const DimList &outDims = dimsOf(out);
  std::string idxStrides, ptrs, limits, idxIn;
  for (auto [j, v] : llvm::enumerate(idx)) {
    // v's strides over B, placed at B's dims of the result.
    DimList bDims(b.begin(), b.end());
    std::string sv = broadcastStrides(v, bDims);
    DimList row(outDims.size(), "0");
    SmallVector<StringRef> parts;
    StringRef(sv).drop_front().drop_back().split(parts, ", ");
    for (size_t i = 0; i < bRank && i < parts.size(); ++i)
      row[bStart + i] = parts[i].str();
    for (auto &r : row)
      idxStrides += (idxStrides.empty() ? "" : ", ") + r;
    ptrs += (j ? ", " : "") + name(v);
    limits += (j ? ", " : "") + d[pos[j]];
    idxIn += (j ? ", " : "") + inStrides[pos[j]];
  }
  if (outDims.empty())
    return op->emitError() << "dynoc build (cpu): index.Tensor with a 0-d "
                              "result is not supported yet";
  code += llvm::formatv(
      "  {{ const int64_t shape[] = {0}, ins[] = {1}, ist[] = {{{2}}, "
      "lim[] = {{{3}}, iin[] = {{{4}};\n"
      "    const int64_t *const ip[] = {{{5}};\n"
      "    if (int rc = dynoc_k::index_gather({6}, {7}, shape, {8}, ins, {9}, "
      "ip, ist, lim, iin)) return rc; }\n",
      braceList(outDims), braceList(outInStride), idxStrides, limits, idxIn,
      ptrs, name(out), name(in), outDims.size(), idx.size());
  return success();
}

LogicalResult FuncEmitter::emitSliceSelect(Operation *op) {
  Value in = op->getOperand(0), out = op->getResult(0);
  const DimList &d = dimsOf(in);
  bool select = op->getName().getStringRef() == "aten.select.int";
  auto dimAttr = op->getAttrOfType<IntegerAttr>("dim");
  auto dim = normDim(op, dimAttr ? dimAttr.getInt() : 0, d.size());
  if (failed(dim))
    return failure();
  auto get = [&](StringRef n, int64_t dflt) {
    auto a = op->getAttrOfType<IntegerAttr>(n);
    return a ? a.getInt() : dflt;
  };
  if (!select && !symSize(op, "start", 0).empty())
    return op->emitError() << "dynoc build (cpu): a slice start that depends "
                              "on the input dims is not supported yet";
  std::string symEnd = select ? "" : symSize(op, "end", 0);
  int64_t step = select ? 1 : get("step", 1);
  if (step < 1)
    return op->emitError() << "dynoc build (cpu): slice step must be >= 1";
  std::string startText, lenText;
  if (isLiteral(d[*dim]) && symEnd.empty()) {
    int64_t size = std::stoll(d[*dim]), start, len;
    if (select) {
      start = get("index", 0);
      if (start < 0)
        start += size;
      if (start < 0 || start >= size)
        return op->emitError()
               << "dynoc build (cpu): select index out of range";
      len = 1;
    } else {
      start = get("start", 0);
      int64_t end = get("end", size);
      if (start < 0)
        start += size;
      if (end < 0)
        end += size;
      start = std::clamp<int64_t>(start, 0, size);
      end = std::clamp<int64_t>(end, start, size);
      len = (end - start + step - 1) / step;
    }
    startText = std::to_string(start), lenText = std::to_string(len);
  } else {
    // A dim known at run time, or an end from the input dims
    // (dynoc.sym_sizes): ATen's wrapping and clamping, computed then.
    const std::string &size = d[*dim];
    auto wrapped = [&](int64_t v) {
      return v < 0 ? "(" + size + " - " + std::to_string(-v) + ")"
                   : std::to_string(v);
    };
    if (select) {
      startText = resolved(wrapped(get("index", 0)));
      require("0 <= " + startText + " && " + startText + " < " + size, op,
              "the index is out of range");
      lenText = "1";
    } else {
      constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
      int64_t end = get("end", kMax);
      std::string endText = !symEnd.empty()   ? symEnd
                            : end >= kMax / 2 ? size
                                              : wrapped(end);
      startText = resolved(llvm::formatv("std::clamp<int64_t>({0}, 0, {1})",
                                         wrapped(get("start", 0)), size));
      lenText = resolved(llvm::formatv(
          "(std::clamp<int64_t>({0}, {1}, {2}) - {1} + {3} - 1) / {3}", endText,
          startText, size, step));
    }
  }
  DimList computed = d;
  if (select)
    computed.erase(computed.begin() + *dim);
  else
    computed[*dim] = lenText;
  setDims(out, op, computed);
  ArrayRef<std::string> all(d);
  code += llvm::formatv(
      "  dynoc_k::slice_copy({0}, {1}, {2}, {3}, {4}, {5}, {6}, {7});\n",
      name(out), name(in), product(all.take_front(*dim)), d[*dim],
      product(all.drop_front(*dim + 1)), startText, step, lenText);
  return success();
}

LogicalResult FuncEmitter::emitCat(Operation *op) {
  auto cat = cast<aten::AtenCatOp>(op);
  Value out = op->getResult(0);
  // Zero-size 1-D operands are legacy "empty" tensors that cat skips.
  SmallVector<Value> parts;
  for (Value t : cat.getTensors())
    if (!(dimsOf(t).size() == 1 && dimsOf(t)[0] == "0"))
      parts.push_back(t);
  if (parts.empty())
    return op->emitError() << "dynoc build (cpu): cat of nothing";
  const DimList &first = dimsOf(parts.front());
  auto dim = normDim(op, cat.getDim() ? *cat.getDim() : 0, first.size());
  if (failed(dim))
    return failure();
  SmallVector<std::string> lens;
  for (Value t : parts) {
    if (dimsOf(t).size() != first.size())
      return op->emitError() << "dynoc build (cpu): cat of different ranks";
    lens.push_back(dimsOf(t)[*dim]);
  }
  DimList computed = first;
  std::string total;
  bool literal = llvm::all_of(lens, isLiteral);
  int64_t sum = 0;
  for (auto &l : lens) {
    total += (total.empty() ? "" : " + ") + l;
    sum += literal ? std::stoll(l) : 0;
  }
  computed[*dim] = literal ? std::to_string(sum) : "(" + total + ")";
  setDims(out, op, computed);
  DimList outDims = dimsOf(out);
  ArrayRef<std::string> all(outDims);
  std::string outer = product(all.take_front(*dim)),
              inner = product(all.drop_front(*dim + 1)), offset = "0";
  for (auto [t, l] : llvm::zip(parts, lens)) {
    code +=
        llvm::formatv("  dynoc_k::place({0}, {1}, {2}, {3}, {4}, {5}, {6});\n",
                      name(out), name(t), outer, all[*dim], inner, offset, l);
    offset = offset == "0" ? l : offset + " + " + l;
  }
  return success();
}

LogicalResult FuncEmitter::emitGather(Operation *op) {
  auto g = cast<aten::AtenGatherOp>(op);
  const DimList &in = dimsOf(g.getSelf()), &idx = dimsOf(g.getIndex());
  if (in.size() != idx.size() || in.empty())
    return op->emitError() << "dynoc build (cpu): gather needs index of the "
                              "input's rank";
  auto dim = normDim(op, g.getDim(), in.size());
  if (failed(dim))
    return failure();
  Value out = op->getResult(0);
  setDims(out, op, idx);
  code += llvm::formatv(
      "  {{ const int64_t os[] = {0}, is[] = {1};\n"
      "    if (int rc = dynoc_k::gather({2}, {3}, {4}, os, is, {5}, {6})) "
      "return rc; }\n",
      braceList(idx), braceList(in), name(out), name(g.getSelf()),
      name(g.getIndex()), in.size(), *dim);
  return success();
}

LogicalResult FuncEmitter::emitPow(Operation *op) {
  Value in = op->getOperand(0), out = op->getResult(0);
  double e = scalarAttr(op, "exponent", 1.0);
  std::string f;
  if (e == 2.0)
    f = "x * x";
  else if (e == 3.0)
    f = "x * x * x";
  else if (e == 0.5)
    f = "std::sqrt(x)";
  else if (e == 1.0)
    f = "x";
  else
    f = "std::pow(x, " + fmtLiteral(e, elemCType(out)) + ")";
  setDims(out, op, dimsOf(in));
  code += llvm::formatv(
      "  dynoc_k::unary({0}, {1}, {2}, []({4} x) {{ return {3}; });\n",
      name(out), name(in), numelOf(out), f, elemCType(out));
  return success();
}

LogicalResult FuncEmitter::emitAttention(Operation *op) {
  auto sdpa = cast<aten::ScaledDotProductFlashAttentionForCpuOp>(op);
  Value mask = sdpa.getAttnMask();
  if (mask && (dimsOf(mask).size() != 4 || !elementTypeOf(mask).isF32()))
    return op->emitError() << "dynoc build (cpu): attention's attn_mask must "
                              "be a 4-D f32 (additive) mask";
  if (sdpa.getDropoutP() && *sdpa.getDropoutP() != APFloat(0.0))
    return op->emitError() << "dynoc build (cpu): attention with dropout";
  if (failed(onlyFirstResult(op, "logsumexp")))
    return failure();
  const DimList &q = dimsOf(sdpa.getQuery()), &k = dimsOf(sdpa.getKey()),
                &v = dimsOf(sdpa.getValue());
  if (q.size() != 4 || k.size() != 4 || v.size() != 4)
    return op->emitError() << "dynoc build (cpu): attention expects "
                              "(batch, heads, length, dim) operands";
  double scale = sdpa.getScale()   ? sdpa.getScale()->convertToDouble()
                 : isLiteral(q[3]) ? 1.0 / std::sqrt(double(std::stoll(q[3])))
                                   : 0.0;
  if (scale == 0.0)
    return op->emitError() << "dynoc build (cpu): attention needs a static "
                              "head dim or a scale";
  Value out = op->getResult(0);
  setDims(out, op, {q[0], q[1], q[2], v[3]});
  std::string bh = product({q[0], q[1]});
  std::string scores = scratch(product({bh, q[2], k[2], "4"}));
  bool causal = sdpa.getIsCausal() && *sdpa.getIsCausal();
  std::string maskArgs;
  if (mask)
    maskArgs = llvm::formatv(", {0}, ms, {1}", name(mask), q[1]).str();
  code += llvm::formatv(
      "  {{ const int64_t ms[] = {13};\n"
      "    if (int rc = dynoc_k::attention({0}, {1}, {2}, {3}, {4}, {5}, {6}, "
      "{7}, {8}, {9}, {10}, {11}{12})) return rc; }\n",
      name(out), name(sdpa.getQuery()), name(sdpa.getKey()),
      name(sdpa.getValue()), bh, q[2], k[2], q[3], v[3],
      llvm::formatv("{0:e17}", scale).str(), causal ? "true" : "false", scores,
      maskArgs,
      mask ? broadcastStrides(mask, {q[0], q[1], q[2], k[2]}) : "{0}");
  return success();
}

LogicalResult FuncEmitter::emit(const std::string &graphBase) {
  base = graphBase;
  Block &body = func.getBody().front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  std::string decls, kernels;
  for (BlockArgument arg : body.getArguments()) {
    unsigned i = arg.getArgNumber();
    auto rt = arg.getType().dyn_cast<RankedTensorType>();
    std::string n = "a" + std::to_string(i);
    names[arg] = n;
    // A 0-d int or double argument is a Python number the program used with
    // f32 tensors (a wrapped scalar): it takes part as an f32 value.
    std::string scalarType =
        rt && rt.getRank() == 0 ? cScalarType(rt.getElementType()) : "";
    if (!scalarType.empty() && elemCType(arg).empty()) {
      scalarArgs.insert(arg);
      dims[arg] = {};
      decls += llvm::formatv("  float {0}_value = float(*static_cast<const {1} "
                             "*>(args[{2}]));\n  float *{0} = &{0}_value;\n",
                             n, scalarType, i);
      continue;
    }
    if (!rt || elemCType(arg).empty())
      return func.emitError()
             << "dynoc build (cpu): argument " << i << " has type "
             << arg.getType()
             << "; the CPU backend supports f32, f64, bf16, f16, i64, i32 and "
                "bool tensors only so far";
    DimList d;
    for (auto [k, size] : llvm::enumerate(rt.getShape()))
      d.push_back(ShapedType::isDynamic(size)
                      ? llvm::formatv("in[{0}][{1}]", i, k).str()
                      : std::to_string(size));
    for (const std::string &dim : d)
      if (!isLiteral(dim))
        symbolDims.push_back(dim);
    dims[arg] = d;
    decls += llvm::formatv("  {2} *{0} = static_cast<{2} *>(args[{1}]);\n", n,
                           i, elemCType(arg));
  }
  // A result computed by an op is written straight into its output buffer.
  llvm::DenseMap<Value, unsigned> outSlot;
  for (auto [i, v] : llvm::enumerate(ret.getOperands()))
    if (!v.isa<BlockArgument>() && !outSlot.count(v)) {
      outSlot[v] = i;
      inOutput.insert(v);
    }

  // Values that share their operand's storage: views and clones (values are
  // immutable here), and transposes folded into a GEMM.
  auto aliasOf = [&](Operation *op) -> Value {
    StringRef n = op->getName().getStringRef();
    if (isFoldedTranspose(op))
      return op->getOperand(0);
    if (inOutput.count(op->getResult(0)))
      return {};
    auto it = table().find(n);
    if (it != table().end() && it->second == &FuncEmitter::emitCopy &&
        elemCType(op->getOperand(0)) == elemCType(op->getResult(0)))
      return op->getOperand(0);
    if (isIdentityExpand(op))
      return op->getOperand(0);
    return {};
  };
  // Liveness over storage roots, for the memory plan.
  llvm::DenseMap<Value, Value> root;
  auto rootOf = [&](Value v) {
    auto it = root.find(v);
    return it == root.end() ? v : it->second;
  };
  llvm::DenseMap<Value, unsigned> lastUse;
  unsigned index = 0;
  for (Operation &op : body.without_terminator()) {
    for (Value o : op.getOperands())
      lastUse[rootOf(o)] = index;
    if (Value a = aliasOf(&op))
      root[op.getResult(0)] = rootOf(a);
    ++index;
  }

  // Storage: each intermediate takes a free workspace slot (one whose value
  // is dead), so buffers are reused; a slot's size is the largest value it
  // holds, resolved at run time when dims are dynamic.
  std::vector<std::vector<std::string>> slotBytes;
  std::vector<std::pair<unsigned, unsigned>> liveSlots; // (lastUse, slot)
  std::vector<unsigned> freeSlots;
  llvm::DenseMap<Value, unsigned> slotOf; // intermediates in the workspace
  // In place: an elementwise op may write its result over an operand whose
  // storage dies at this op and has the result's dims and element size (each
  // element is read before the same element is written). Returns the slot.
  auto inPlaceSlot = [&](Operation &op, Value r,
                         unsigned at) -> std::optional<unsigned> {
    auto kind = table().lookup(op.getName().getStringRef());
    auto group = dyn_cast<dynoc::FusionGroupOp>(op);
    bool elementwise = kind == &FuncEmitter::emitUnary ||
                       kind == &FuncEmitter::emitBinary ||
                       kind == &FuncEmitter::emitScalarBinary ||
                       kind == &FuncEmitter::emitPow ||
                       (group && group.getKind() == "elementwise");
    if (!allowInPlace || !elementwise || op.getNumResults() != 1)
      return std::nullopt;
    for (Value o : op.getOperands()) {
      Value root = rootOf(o);
      auto slot = slotOf.find(root);
      if (slot == slotOf.end() || lastUse.lookup(root) != at ||
          dimsOf(o) != dimsOf(r) || elemBytes(o) != elemBytes(r))
        continue;
      return slot->second;
    }
    return std::nullopt;
  };
  // Every op the backend cannot run is reported, each at its location, before
  // any code is printed (a user fixes them all at once; tools/op_coverage.py
  // lists them across many graphs).
  bool unsupported = false;
  for (Operation &op : body.without_terminator()) {
    if (!table().count(op.getName().getStringRef())) {
      op.emitError() << "dynoc build (cpu): op '" << op.getName()
                     << "' is not supported by the CPU backend yet";
      unsupported = true;
    } else if (failed(checkTypes(&op))) {
      unsupported = true;
    }
  }
  if (unsupported)
    return failure();
  index = 0;
  for (Operation &op : body.without_terminator()) {
    auto it = table().find(op.getName().getStringRef());
    if (it == table().end())
      return op.emitError() << "dynoc build (cpu): op '" << op.getName()
                            << "' is not supported by the CPU backend yet";
    if (failed(checkTypes(&op)))
      return failure();
    for (size_t k = 0; k < liveSlots.size();)
      if (liveSlots[k].first < index) {
        freeSlots.push_back(liveSlots[k].second);
        liveSlots.erase(liveSlots.begin() + k);
      } else {
        ++k;
      }
    // Dead ops (every aten op here is pure) are not computed.
    if (llvm::none_of(op.getResults(), [&](Value r) { return needed(r); })) {
      ++index;
      continue;
    }
    code.clear();
    scratchRequests.clear();
    Value alias = aliasOf(&op);
    for (Value r : op.getResults())
      names[r] = needed(r) ? "v" + std::to_string(next++) : "nullptr";
    std::string firstName = names[op.getResult(0)];
    if (alias)
      names[op.getResult(0)] = name(alias);
    if (failed((this->*(it->second))(&op)))
      return failure();
    std::string loc = locOf(&op);
    kernels += "  // " + op.getName().getStringRef().str() + " " + loc + "\n";
    auto takeSlot = [&](const std::string &bytes, unsigned lastUseIndex) {
      unsigned s;
      if (!freeSlots.empty()) {
        s = freeSlots.back();
        freeSlots.pop_back();
      } else {
        s = slotBytes.size();
        slotBytes.emplace_back();
      }
      slotBytes[s].push_back(bytes);
      liveSlots.push_back({lastUseIndex, s});
      return s;
    };
    for (Value r : op.getResults()) {
      if (!needed(r) || (alias && r == op.getResult(0)))
        continue;
      std::string n = r == op.getResult(0) ? firstName : name(r);
      auto slot = outSlot.find(r);
      if (slot != outSlot.end()) {
        kernels +=
            llvm::formatv("  {2} *{0} = static_cast<{2} *>(outs[{1}]);\n", n,
                          slot->second, elemCType(r));
        continue;
      }
      auto lu = lastUse.find(r);
      unsigned last = lu == lastUse.end() ? index : lu->second;
      unsigned s;
      if (std::optional<unsigned> donor = inPlaceSlot(op, r, index)) {
        s = *donor;
        for (auto &live : liveSlots)
          if (live.second == s)
            live.first = last;
        ++inPlaceOps;
      } else {
        s = takeSlot(product({numelOf(r), elemBytes(r)}), last);
      }
      slotOf[r] = s;
      kernels +=
          llvm::formatv("  {2} *{0} = reinterpret_cast<{2} *>(ws + o[{1}]);\n",
                        n, s, elemCType(r));
    }
    // Scratch lives for this op only: its slot is free again at the next.
    for (auto &[n, bytes] : scratchRequests)
      kernels += llvm::formatv(
          "  float *{0} = reinterpret_cast<float *>(ws + o[{1}]);\n", n,
          takeSlot(bytes, index));
    next += scratchRequests.size();
    kernels += code;
    ++index;
  }
  for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
    auto slot = outSlot.find(v);
    if (slot == outSlot.end() || slot->second != i)
      kernels +=
          llvm::formatv("  std::memcpy(outs[{0}], {1}, {2} * sizeof({3}));\n",
                        i, name(v), numelOf(v), elemCType(v));
  }

  // Slot offsets: o[k] is where slot k starts, o[numSlots] the total.
  std::string offsets = "  o[0] = 0;\n";
  bool allStatic = true;
  int64_t staticTotal = 0;
  for (auto [k, sizes] : llvm::enumerate(slotBytes)) {
    std::string size;
    if (llvm::all_of(sizes, isLiteral)) {
      int64_t m = 0;
      for (auto &s : sizes)
        m = std::max<int64_t>(m, std::stoll(s));
      size = std::to_string((m + 63) / 64 * 64);
      staticTotal += (m + 63) / 64 * 64;
    } else {
      allStatic = false;
      size = "dynoc_k::align64(std::max<int64_t>(" + braceList(sizes) + "))";
    }
    offsets += llvm::formatv("  o[{0}] = o[{1}] + {2};\n", k + 1, k, size);
  }
  staticWorkspaceBytes = allStatic ? staticTotal : -1;
  size_t numSlots = slotBytes.size();
  std::string arrays = llvm::formatv("  int64_t p[{0}], o[{1}];\n",
                                     std::max(numPlan, 1u), numSlots + 1);

  os += globals;
  os += "static const char *" + base +
        "_resolve(const int64_t *const *in, int64_t *p, int64_t *o) {\n"
        "  (void)in;\n  (void)p;\n" +
        resolve + offsets + "  return nullptr;\n}\n\n";
  os += "extern \"C\" DYNOC_EXPORT const char *" + base +
        "_shapes(const int64_t *const *in, int64_t *const *out, "
        "int64_t *workspace_bytes) {\n" +
        arrays + "  if (const char *e = " + base +
        "_resolve(in, p, o))\n    return e;\n  (void)out;\n";
  for (auto [i, v] : llvm::enumerate(ret.getOperands()))
    for (auto [d, e] : llvm::enumerate(dimsOf(v)))
      os += llvm::formatv("  out[{0}][{1}] = {2};\n", i, d, e);
  os += llvm::formatv("  *workspace_bytes = o[{0}];\n  return nullptr;\n}\n\n",
                      numSlots);
  os += "extern \"C\" DYNOC_EXPORT int " + base +
        "_run(const int64_t *const *in, void *const *args, void *const *outs, "
        "void *workspace) {\n" +
        arrays + "  if (" + base + "_resolve(in, p, o))\n    return 1;\n" +
        "  char *ws = static_cast<char *>(workspace);\n  (void)ws;\n" + decls +
        kernels + "  return 0;\n}\n\n";
  return success();
}

} // namespace cpu

namespace {
using namespace cpu;

json guardToJson(DictionaryAttr d) {
  json g = json::object();
  for (NamedAttribute a : d) {
    std::string key = a.getName().str();
    Attribute v = a.getValue();
    if (auto s = v.dyn_cast<StringAttr>())
      g[key] = s.str();
    else if (auto b = v.dyn_cast<BoolAttr>())
      g[key] = b.getValue();
    else if (auto i = v.dyn_cast<IntegerAttr>())
      g[key] = i.getInt();
    else if (auto f = v.dyn_cast<FloatAttr>())
      g[key] = f.getValueAsDouble();
    else if (auto t = v.dyn_cast<TypeAttr>())
      g[key] = torchDTypeName(t.getValue());
    else if (auto arr = v.dyn_cast<DenseI64ArrayAttr>())
      g[key] = arr.asArrayRef().vec();
  }
  return g;
}

json tensorJson(const std::string &kind, const std::string &name, Type t) {
  auto rt = t.cast<RankedTensorType>();
  std::vector<int64_t> shape;
  for (int64_t d : rt.getShape())
    shape.push_back(ShapedType::isDynamic(d) ? -1 : d);
  return {{"kind", kind},
          {"name", name},
          {"dtype", torchDTypeName(rt.getElementType())},
          {"shape", shape}};
}

} // namespace

LogicalResult emitCpuModule(ModuleOp module, const std::string &weightsFile,
                            bool embedWeights, CpuModuleSource &out) {
  out.cpp = "// Generated by dynoc build --target=cpu. Do not edit.\n"
            "#include \"dynoc_kernels.h\"\n\n"
            "#define DYNOC_EXPORT __attribute__((visibility(\"default\")))\n\n";
  json manifest = {
      {"format", "dynoc-model"}, {"version", 1}, {"graphs", json::array()}};
  if (embedWeights)
    manifest["weights_embedded"] = true;
  else if (!weightsFile.empty())
    manifest["weights"] = weightsFile;
  std::set<std::string> weights;
  // Emits one function; `g` gets its symbols and signature.
  unsigned inPlaceOps = 0;
  auto emitGraph = [&](func::FuncOp func, const std::string &base,
                       json &g) -> LogicalResult {
    // The plan with in-place ops, unless the one without is smaller (greedy
    // slot assignment can come out either way).
    std::string code;
    FuncEmitter emitter(func, code, /*allowInPlace=*/true);
    if (failed(emitter.emit(base)))
      return failure();
    int64_t workspace = emitter.staticWorkspaceBytes;
    inPlaceOps = emitter.inPlaceOps;
    if (workspace >= 0 && inPlaceOps > 0) {
      std::string other;
      FuncEmitter without(func, other, /*allowInPlace=*/false);
      if (succeeded(without.emit(base)) &&
          without.staticWorkspaceBytes < workspace) {
        code = std::move(other);
        workspace = without.staticWorkspaceBytes;
        inPlaceOps = 0;
      }
    }
    out.cpp += code;
    g["name"] = func.getSymName().str();
    g["symbol"] = base + "_run";
    g["shapes_symbol"] = base + "_shapes";
    g["workspace_bytes"] = workspace;
    auto inputs = func->getAttrOfType<ArrayAttr>(attrs::kInputs);
    if (!inputs)
      return func.emitError()
             << "graph '" << func.getSymName() << "' lacks '" << attrs::kInputs
             << "'; is it a dynoc graph file?";
    g["inputs"] = json::array();
    for (auto [i, in] : llvm::enumerate(inputs)) {
      auto d = in.cast<DictionaryAttr>();
      std::string kind = d.getAs<StringAttr>("kind").str();
      std::string name = d.getAs<StringAttr>("name").str();
      g["inputs"].push_back(tensorJson(kind, name, func.getArgumentTypes()[i]));
      if (kind != "user" && kind != "prepared")
        weights.insert(name);
    }
    g["outputs"] = json::array();
    for (auto [i, t] : llvm::enumerate(func.getResultTypes()))
      g["outputs"].push_back(
          tensorJson("output", "output_" + std::to_string(i), t));
    return success();
  };
  // Prepare functions (dynoc-precompute-weights) go with their graph.
  llvm::StringMap<func::FuncOp> prepares;
  for (auto func : module.getOps<func::FuncOp>())
    if (auto p = func->getAttrOfType<StringAttr>(attrs::kPrepares))
      prepares[p.getValue()] = func;
  int index = 0;
  for (auto func : module.getOps<func::FuncOp>()) {
    if (func->hasAttr(attrs::kPrepares))
      continue;
    std::string base = "dynoc_graph_" + std::to_string(index++);
    json g = json::object();
    if (failed(emitGraph(func, base, g)))
      return failure();
    out.workspaceBytes.push_back(g["workspace_bytes"].get<int64_t>());
    out.inPlaceOps.push_back(inPlaceOps);
    if (auto e = func->getAttrOfType<StringAttr>(attrs::kEntry))
      g["entry"] = e.str();
    if (auto it = prepares.find(func.getSymName()); it != prepares.end()) {
      json p = json::object();
      if (failed(emitGraph(it->second, base + "_prepare", p)))
        return failure();
      p["guards"] = json::array();
      g["prepare"] = p;
    }
    if (auto s = func->getAttrOfType<StringAttr>(attrs::kOutputs)) {
      json structure = json::parse(s.str(), nullptr, false);
      if (structure.is_discarded())
        return func.emitError()
               << "'" << attrs::kOutputs << "' is not valid JSON";
      g["output_structure"] = structure;
    }
    if (auto s = func->getAttrOfType<StringAttr>(attrs::kMutations)) {
      json mutations = json::parse(s.str(), nullptr, false);
      if (mutations.is_discarded() || !mutations.is_array())
        return func.emitError()
               << "'" << attrs::kMutations << "' is not a JSON array";
      g["mutations"] = mutations;
    }
    g["guards"] = json::array();
    if (auto guards = func->getAttrOfType<ArrayAttr>(attrs::kGuards))
      for (Attribute a : guards)
        g["guards"].push_back(guardToJson(a.cast<DictionaryAttr>()));
    manifest["graphs"].push_back(g);
  }
  if (index == 0)
    return module.emitError()
           << "dynoc build: the module has no graph (func.func)";
  out.weightNames.assign(weights.begin(), weights.end());
  if (out.weightNames.empty()) {
    manifest.erase("weights");
    manifest.erase("weights_embedded");
  }
  out.manifestJson = manifest.dump(1);
  out.cpp += "static const char kManifest[] = R\"DYNOC_MANIFEST(" +
             out.manifestJson +
             ")DYNOC_MANIFEST\";\n\n"
             "extern \"C\" DYNOC_EXPORT const char *dynoc_model_manifest(void) "
             "{ return kManifest; }\n"
             "extern \"C\" DYNOC_EXPORT int dynoc_model_abi_version(void) { "
             "return 3; }\n";
  return success();
}

} // namespace dynoc
