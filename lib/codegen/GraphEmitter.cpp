//===- GraphEmitter.cpp - aten graph -> kernel library calls --------------===//
//
// One C++ function per graph (func.func). Each aten op becomes a call into the
// target's kernel library (dynoc_k::, one prelude per target) or a pointwise
// loop the target prints. Intermediates live in workspace slots the memory
// plan assigns; results are written straight into the caller's output
// buffers.
//
//===----------------------------------------------------------------------===//
#include "GraphEmitter.h"
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
namespace codegen {

const llvm::StringMap<GraphEmitter::EmitFn> &GraphEmitter::table() {
  static const llvm::StringMap<EmitFn> t = [] {
    llvm::StringMap<EmitFn> m;
    for (const char *n :
         {"aten.relu", "aten.sigmoid", "aten.tanh", "aten.neg", "aten.exp",
          "aten.gelu", "aten.silu", "aten.sqrt", "aten.rsqrt", "aten.abs",
          "aten.logical_not", "aten.pow.Scalar", "aten.reciprocal",
          "aten.erf", "aten.bitwise_not"})
      m[n] = &GraphEmitter::emitUnary;
#define DYNOC_UNARY_FUNCTION(OP, EXPRESSION, DTYPES, ATTRIBUTES)             \
  m[OP] = &GraphEmitter::emitUnary;
#include "dynoc/Codegen/UnaryFunctions.def"
    for (const char *n :
         {"aten.add.Tensor", "aten.sub.Tensor", "aten.mul.Tensor",
          "aten.div.Tensor", "aten.maximum", "aten.minimum",
          "aten.bitwise_and.Tensor", "aten.bitwise_or.Tensor",
          "aten.bitwise_xor.Tensor", "aten.pow.Tensor_Tensor"})
      m[n] = &GraphEmitter::emitBinary;
    m["aten.div.Tensor_mode"] = &GraphEmitter::emitBinary;
    for (const char *n : {"aten.add.Scalar", "aten.sub.Scalar",
                          "aten.mul.Scalar", "aten.div.Scalar",
                          "aten.div.Scalar_mode"})
      m[n] = &GraphEmitter::emitScalarBinary;
#define DYNOC_BINARY_FUNCTION(OP, EXPRESSION, DTYPES)                          \
  m[OP] = StringRef(OP).endswith(".Scalar") ? &GraphEmitter::emitScalarBinary  \
                                            : &GraphEmitter::emitBinary;
#include "dynoc/Codegen/BinaryFunctions.def"
    for (const char *cmp : {"eq", "ne", "lt", "le", "gt", "ge"}) {
      m[std::string("aten.") + cmp + ".Tensor"] = &GraphEmitter::emitBinary;
      m[std::string("aten.") + cmp + ".Scalar"] =
          &GraphEmitter::emitScalarBinary;
    }
    for (const char *n : {"aten.mm", "aten.addmm", "aten.linear"})
      m[n] = &GraphEmitter::emitMatmul;
    for (const char *n : {"aten.t", "aten.transpose.int", "aten.permute"})
      m[n] = &GraphEmitter::emitTranspose;
    for (const char *n :
         {"aten.view", "aten._unsafe_view", "aten.reshape", "aten.clone",
          "aten.contiguous", "aten.alias", "aten.detach",
          "aten.flatten.using_ints", "aten.unsqueeze", "aten.squeeze.dim",
          "aten.squeeze.dims", "aten.squeeze",
          "aten.dropout", "aten.lift_fresh_copy", "aten.lift_fresh",
          "aten._to_copy", "aten.view_as"})
      m[n] = &GraphEmitter::emitCopy;
    m["aten.expand"] = &GraphEmitter::emitExpand;
    m["aten.expand_as"] = &GraphEmitter::emitExpand;
    m["aten.as_strided"] = &GraphEmitter::emitAsStrided;
    m["aten.bmm"] = &GraphEmitter::emitBmm;
    m["aten.convolution"] = &GraphEmitter::emitConvolution;
    m["aten.convolution_backward"] = &GraphEmitter::emitConvolutionBackward;
    m["aten.max_pool2d_with_indices_backward"] =
        &GraphEmitter::emitMaxPoolBackward;
    m["aten.embedding_dense_backward"] = &GraphEmitter::emitEmbeddingBackward;
    m["aten.native_batch_norm"] = &GraphEmitter::emitBatchNorm;
    m["aten._native_batch_norm_legit_no_training"] =
        &GraphEmitter::emitBatchNorm;
    m["aten.max_pool2d_with_indices"] = &GraphEmitter::emitMaxPool;
    m["aten.avg_pool2d"] = &GraphEmitter::emitAvgPool;
    m["aten.native_layer_norm"] = &GraphEmitter::emitLayerNorm;
    m["aten._softmax"] = &GraphEmitter::emitSoftmax;
    for (const char *n : {"aten.sum", "aten.sum.dim_IntList", "aten.mean",
                          "aten.mean.dim", "aten.amax", "aten.amin",
                          "aten.prod", "aten.prod.dim_int"})
      m[n] = &GraphEmitter::emitReduction;
    m["aten._log_softmax"] = &GraphEmitter::emitSoftmax;
    m["aten.split.Tensor"] = &GraphEmitter::emitSplit;
    m["aten.unsafe_split.Tensor"] = &GraphEmitter::emitSplit;
    m["aten.leaky_relu"] = &GraphEmitter::emitUnary;
    m["aten.hardtanh"] = &GraphEmitter::emitUnary; // relu6, F.hardtanh
    for (const char *n : {"aten.clamp", "aten.clamp_min", "aten.clamp_max"})
      m[n] = &GraphEmitter::emitUnary;
    m["aten.arange.start"] = &GraphEmitter::emitArange;
    m["aten.arange.start_step"] = &GraphEmitter::emitArange;
    m["aten.zero"] = &GraphEmitter::emitFull;
    m["aten.empty_like"] = &GraphEmitter::emitFull;
    m["aten.empty.memory_format"] = &GraphEmitter::emitFull;
    m["aten.new_ones"] = &GraphEmitter::emitFull;
    m["aten.new_zeros"] = &GraphEmitter::emitFull;
    // Values undefined: filled with zeros, in a dense layout (strides are
    // not part of a graph value).
    for (const char *n :
         {"aten.new_empty", "aten.empty_strided", "aten.new_empty_strided"})
      m[n] = &GraphEmitter::emitFull;
    m["aten.scalar_tensor"] = &GraphEmitter::emitFull;
    for (const char *n : {"aten.nll_loss_forward", "aten.nll_loss2d_forward"})
      m[n] = &GraphEmitter::emitNllLoss;
    m["aten.mkldnn_rnn_layer"] = &GraphEmitter::emitLstmLayer;
    m["aten.mse_loss"] = &GraphEmitter::emitMseLoss;
    m["aten.cumsum"] = &GraphEmitter::emitCumsum;
    m["aten.constant_pad_nd"] = &GraphEmitter::emitConstantPad;
    for (const char *n :
         {"aten.uniform", "aten.normal_functional", "aten.bernoulli.p",
          "aten.bernoulli", "aten.bernoulli.Tensor", "aten.rand", "aten.randn",
          "aten.rand_like", "aten.randn_like"})
      m[n] = &GraphEmitter::emitRandom;
    m["dynoc.fusion_group"] = &GraphEmitter::emitFusionGroup;
    for (const char *n : {"dynoc.all_reduce", "dynoc.all_gather_into_tensor",
                          "dynoc.reduce_scatter_tensor", "dynoc.broadcast",
                          "dynoc.all_to_all_single"})
      m[n] = &GraphEmitter::emitCollective;
    m["dynoc.wait_tensor"] = &GraphEmitter::emitWaitTensor;
    m["aten.embedding"] = &GraphEmitter::emitEmbedding;
    m["aten.arange"] = &GraphEmitter::emitArange;
    for (const char *n :
         {"aten.full", "aten.ones", "aten.zeros", "aten.full_like",
          "aten.ones_like", "aten.zeros_like"})
      m[n] = &GraphEmitter::emitFull;
    m["aten.where.self"] = &GraphEmitter::emitWhere;
    m["aten.masked_fill.Scalar"] = &GraphEmitter::emitWhere;
    m["aten.argmax"] = &GraphEmitter::emitArgReduce;
    m["aten.argmin"] = &GraphEmitter::emitArgReduce;
    m["aten.index.Tensor"] = &GraphEmitter::emitIndex;
    m["aten.index_put"] = &GraphEmitter::emitIndexPut;
    for (const char *n : kScatterOps)
      m[n] = &GraphEmitter::emitScatter;
    for (const char *n : kSortOps)
      m[n] = &GraphEmitter::emitSort;
    for (const char *n : kResamplingOps)
      m[n] = &GraphEmitter::emitResampling;
    m["aten.slice.Tensor"] = &GraphEmitter::emitSliceSelect;
    m["aten.select.int"] = &GraphEmitter::emitSliceSelect;
    m["aten.cat"] = &GraphEmitter::emitCat;
    m["aten.stack"] = &GraphEmitter::emitStack;
    m["aten.unbind.int"] = &GraphEmitter::emitUnbind;
    m["aten.gather"] = &GraphEmitter::emitGather;
    m["aten.pow.Tensor_Scalar"] = &GraphEmitter::emitPow;
    m["aten._scaled_dot_product_flash_attention_for_cpu"] =
        &GraphEmitter::emitAttention;
    m["aten._scaled_dot_product_flash_attention_for_cpu_backward"] =
        &GraphEmitter::emitAttentionBackward;
    return m;
  }();
  return t;
}

void GraphEmitter::setDims(Value v, Operation *op, const DimList &computed) {
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

std::string GraphEmitter::broadcastStrides(Value v, const DimList &out) {
  return braceList(codegen::broadcastStrideList(dimsOf(v), out));
}

LogicalResult GraphEmitter::checkTypes(Operation *op) {
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
      return fail(op) << "'" << op->getName()
                      << "' has a non-tensor value of type " << t
                      << ", which the " << target.displayName()
                      << " backend does not support yet";
    if (dtypeBit(rt.getElementType()) & target.dtypes(op, supportedDTypes(op)))
      continue;
    return fail(op) << "'" << op->getName() << "' uses dtype "
                    << rt.getElementType() << ", which the "
                    << target.displayName()
                    << " backend does not run this op on yet";
  }
  return success();
}

LogicalResult GraphEmitter::emitMatmul(Operation *op) {
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
  bool transA = false;
  if (Operation *def = sourceOf(a).getDefiningOp())
    if (n != "aten.linear" && isFoldedTranspose(def)) {
      a = def->getOperand(0);
      transA = true;
    }
  const DimList &ad = dimsOf(a), &bd = dimsOf(b);
  if (ad.empty() || (ad.size() != 2 && n != "aten.linear") || bd.size() != 2)
    return fail(op) << "'" << n
                    << "' expects 2-D operands (a 1-D or higher-rank "
                       "input to linear)";
  std::string K = transA ? ad[0] : ad.back(),
              M = transA ? ad[1] : product(ArrayRef(ad).drop_back());
  std::string N = transB ? bd[0] : bd[1], Kb = transB ? bd[1] : bd[0];
  if (!(isLiteral(K) && isLiteral(Kb)))
    require(K + " == " + Kb, op, "inner dims of the GEMM differ");
  else if (K != Kb)
    return fail(op) << "inner dims " << K << " and " << Kb
                    << " of the GEMM differ";
  DimList computed = transA ? DimList{M} : DimList(ad.begin(), ad.end() - 1);
  computed.push_back(N);
  setDims(out, op, computed);
  const DimList &outDims = dimsOf(out);
  double alpha = scalarAttr(op, "alpha", 1.0),
         beta = scalarAttr(op, "beta", 1.0);
  // A vector bias along the output's columns is the GEMM's bias epilogue.
  if (bias && !transA && beta == 1.0 && dimsOf(bias).size() == 1 &&
      dimsOf(bias)[0] == N && elemCType(bias) == elemCType(out)) {
    code += llvm::formatv("  if (int rc = dynoc_k::gemm_bias({0}, {1}, {2}, "
                          "{3}, {4}, {5}, {6}, {7}, {8})) return rc;\n",
                          transB ? "true" : "false", M, N, K, fmtFloat(alpha),
                          name(a), name(b), name(bias), name(out));
    return success();
  }
  if (bias && beta != 0.0)
    code +=
        llvm::formatv("  {{ const int64_t s[] = {0}, shape[] = {1};\n"
                      "    dynoc_k::expand({2}, {3}, s, shape, {4}, {5}); }\n",
                      broadcastStrides(bias, outDims), braceList(outDims),
                      name(out), name(bias), outDims.size(), fmtFloat(beta));
  code += llvm::formatv(
      "  if (int rc = dynoc_k::gemm({9}, {0}, {1}, {2}, {3}, {4}, "
      "{5}, {6}, {7}, {8})) return rc;\n",
      transB ? "true" : "false", M, N, K, fmtFloat(alpha), name(a), name(b),
      bias && beta != 0.0 ? "1.f" : "0.f", name(out),
      transA ? "true" : "false");
  return success();
}

LogicalResult GraphEmitter::onlyFirstResult(Operation *op, StringRef what) {
  for (Value r : op->getResults().drop_front())
    if (needed(r))
      return fail(op) << "'" << op->getName() << "': its " << what
                      << " result is not supported yet";
  return success();
}

FailureOr<int64_t> GraphEmitter::normDim(Operation *op, int64_t dim,
                                         int64_t rank) {
  // As PyTorch's maybe_wrap_dim: a 0-d tensor takes dims 0 and -1.
  int64_t d = dim < 0 ? dim + std::max<int64_t>(rank, 1) : dim;
  if (d < 0 || d >= std::max<int64_t>(rank, 1))
    return fail(op) << "dim " << dim << " is out of range for rank " << rank;
  return d;
}

std::string GraphEmitter::affineToCpp(AffineExpr e) {
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

std::string GraphEmitter::symSize(Operation *op, StringRef attr, size_t k) {
  auto dict = op->getAttrOfType<DictionaryAttr>(dynoc::attrs::kSymSizes);
  auto map = dict ? dict.getAs<AffineMapAttr>(attr) : AffineMapAttr();
  if (!map || k >= map.getValue().getNumResults())
    return {};
  AffineExpr e = map.getValue().getResult(k);
  if (auto c = e.dyn_cast<AffineConstantExpr>(); c && c.getValue() == -1)
    return {};
  return affineToCpp(e);
}

LogicalResult GraphEmitter::emitBmm(Operation *op) {
  Value a = op->getOperand(0), b = op->getOperand(1), out = op->getResult(0);
  const DimList &ad = dimsOf(a), &bd = dimsOf(b);
  if (ad.size() != 3 || bd.size() != 3)
    return fail(op) << "bmm expects 3-D operands";
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

/// What a profile calls `op`'s kernel: "addmm", or "fused_add_relu" for a
/// fusion group (as Inductor names its kernels), with the aten ops it runs.
static GraphEmitter::KernelSpan kernelSpanOf(Operation *op,
                                             const std::string &loc) {
  auto shortName = [](Operation *o) {
    StringRef n = o->getName().getStringRef();
    n.consume_front("aten.");
    return n.split('.').first.str();
  };
  auto family = [](StringRef n) -> std::string {
    if (isGemm(n) || n == "aten.bmm" || n == "aten.matmul")
      return "gemm";
    if (n.contains("convolution"))
      return "convolution";
    if (n.contains("attention"))
      return "attention";
    return "kernel";
  };
  GraphEmitter::KernelSpan span;
  span.loc = loc;
  // "file:line:col" of the op (a captured graph's locations are the Python
  // source lines), where the location has one.
  op->getLoc()->walk([&](Location l) {
    if (auto f = l.dyn_cast<FileLineColLoc>()) {
      span.loc = llvm::formatv("{0}:{1}:{2}", f.getFilename().getValue(),
                               f.getLine(), f.getColumn());
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  auto group = dyn_cast<dynoc::FusionGroupOp>(op);
  if (!group) {
    span.name = shortName(op);
    span.ops = {op->getName().getStringRef().str()};
    span.category = family(op->getName().getStringRef());
    return span;
  }
  span.name = "fused";
  span.category = "fusion";
  std::set<std::string> named;
  for (Operation &inner : group.getBody().front().without_terminator()) {
    span.ops.push_back(inner.getName().getStringRef().str());
    // An epilogue's GEMM or convolution makes the kernel that family's.
    if (std::string f = family(inner.getName().getStringRef()); f != "kernel")
      span.category = f;
    std::string n = shortName(&inner);
    if (named.size() < 4 && named.insert(n).second)
      span.name += "_" + n;
  }
  return span;
}

LogicalResult GraphEmitter::emit(const std::string &graphBase) {
  base = graphBase;
  kernelSpans.clear();
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
      if (!target.hostReadsTensors())
        return fail(func) << "argument " << i << " is a 0-d "
                          << rt.getElementType()
                          << " tensor (a Python number); the "
                          << target.displayName()
                          << " backend takes such numbers as float32 only";
      scalarArgs.insert(arg);
      dims[arg] = {};
      decls += llvm::formatv("  float {0}_value = float(*static_cast<const {1} "
                             "*>(args[{2}]));\n  float *{0} = &{0}_value;\n",
                             n, scalarType, i);
      continue;
    }
    if (!rt || elemCType(arg).empty())
      return fail(func)
             << "argument " << i << " has type " << arg.getType() << "; the "
             << target.displayName()
             << " backend supports f32, f64, bf16, f16, i64, i32, i16, i8, "
                "ui8 and bool tensors only so far";
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
  auto viewOf = [&](Operation *op) -> Value {
    StringRef n = op->getName().getStringRef();
    if (isFoldedTranspose(op))
      return op->getOperand(0);
    if (inOutput.count(op->getResult(0)))
      return {};
    auto it = table().find(n);
    if (it != table().end() && it->second == &GraphEmitter::emitCopy &&
        elemCType(op->getOperand(0)) == elemCType(op->getResult(0)))
      return op->getOperand(0);
    if (isIdentityExpand(op))
      return op->getOperand(0);
    if (isa<dynoc::WaitTensorOp>(op))
      return op->getOperand(0);
    return {};
  };
  auto aliasOf = [&](Operation *op) -> Value {
    if (Value v = viewOf(op))
      return v;
    // An all-reduce or broadcast of a value nothing else reads (a bucket of
    // gradients) works in place on it: no copy into a buffer of its own.
    if (isa<dynoc::AllReduceOp, dynoc::BroadcastOp>(op) &&
        !inOutput.count(op->getResult(0))) {
      Value in = op->getOperand(0);
      Operation *def = in.getDefiningOp();
      if (def && in.hasOneUse() && !viewOf(def) && !inOutput.count(in))
        return in;
    }
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
    // A collective may read its input until its wait (the communicator
    // works asynchronously): the input's storage lives that long.
    if (auto wait = dyn_cast<dynoc::WaitTensorOp>(op))
      if (Operation *collective = wait.getInput().getDefiningOp())
        if (isa<dynoc::AllReduceOp, dynoc::AllGatherIntoTensorOp,
                dynoc::ReduceScatterTensorOp, dynoc::BroadcastOp,
                dynoc::AllToAllSingleOp>(collective))
          lastUse[rootOf(collective->getOperand(0))] = index;
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
    bool elementwise = kind == &GraphEmitter::emitUnary ||
                       kind == &GraphEmitter::emitBinary ||
                       kind == &GraphEmitter::emitScalarBinary ||
                       kind == &GraphEmitter::emitPow ||
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
  auto check = [&](Operation *op, bool checkDTypes) {
    StringRef n = op->getName().getStringRef();
    if (!table().count(n) || !target.supportsOp(n)) {
      fail(op) << "op '" << op->getName() << "' is not supported by the "
               << target.displayName() << " backend yet";
      unsupported = true;
    } else if (checkDTypes && failed(checkTypes(op))) {
      unsupported = true;
    }
  };
  for (Operation &op : body.without_terminator()) {
    check(&op, true);
    // A fusion group's own ops (an epilogue's convolution or GEMM, its
    // elementwise chain) too.
    if (auto group = dyn_cast<dynoc::FusionGroupOp>(op))
      for (Operation &inner : group.getBody().front().without_terminator())
        check(&inner, false);
  }
  if (unsupported)
    return failure();
  index = 0;
  for (Operation &op : body.without_terminator()) {
    auto it = table().find(op.getName().getStringRef());
    if (it == table().end())
      return fail(op) << "op '" << op.getName() << "' is not supported by the "
                      << target.displayName() << " backend yet";
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
    // A view computes nothing: no span.
    if (code.find_first_not_of(" \n") == std::string::npos) {
      kernels += code;
    } else {
      size_t k = kernelSpans.size();
      kernelSpans.push_back(kernelSpanOf(&op, loc));
      kernels +=
          llvm::formatv("  if (prof) prof->begin(prof->user, {0}, {1});\n", k,
                        target.streamExpr());
      kernels += code;
      kernels += llvm::formatv("  if (prof) prof->end(prof->user, {0}, {1});\n",
                               k, target.streamExpr());
    }
    ++index;
  }
  for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
    auto slot = outSlot.find(v);
    if (slot == outSlot.end() || slot->second != i)
      kernels +=
          llvm::formatv("  dynoc_k::copy(outs[{0}], {1}, {2} * sizeof({3}));\n",
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
  int64_t extra = target.extraWorkspaceBytes();
  if (staticWorkspaceBytes >= 0)
    staticWorkspaceBytes += extra;
  os += llvm::formatv(
      "  *workspace_bytes = o[{0}]{1};\n  return nullptr;\n}\n\n", numSlots,
      extra ? " + " + std::to_string(extra) : std::string());
  os += "extern \"C\" DYNOC_EXPORT " +
        target.runAttributes(kernelSpans.size()) + "int " + base +
        "_run(const int64_t *const *in, void *const *args, void *const *outs, "
        "void *workspace" +
        target.runExtraParams() + ") {\n" + arrays + "  if (" + base +
        "_resolve(in, p, o))\n    return 1;\n" +
        "  char *ws = static_cast<char *>(workspace);\n  (void)ws;\n" +
        target.runPrologue("ws + o[" + std::to_string(numSlots) + "]") +
        "  const dynoc_profiler_hooks_t *prof = dynoc_current_profiler();\n"
        "  (void)prof;\n" +
        decls + kernels + target.runEpilogue() + "}\n\n";
  return success();
}

} // namespace codegen
} // namespace dynoc
