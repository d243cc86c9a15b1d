//===- GraphEmitter.h - one graph -> kernel library calls -------*- C++ -*-===//
//
// Private to lib/codegen: the helpers the op emitters share and the
// GraphEmitter class, which both targets use (Target.h says what differs).
// Its emit* members are spread over one file per op family: GraphEmitter.cpp
// (the op table, GEMMs, the memory plan and the graph function),
// EmitElementwise.cpp, EmitDataMovement.cpp, EmitNN.cpp, EmitLayers.cpp,
// EmitRandom.cpp, EmitIndexing.cpp; ModuleEmitter.cpp prints the module.
//
//===----------------------------------------------------------------------===//
#ifndef DYNOC_CODEGEN_GRAPHEMITTER_H
#define DYNOC_CODEGEN_GRAPHEMITTER_H

#include "dynoc/Codegen/Dims.h"
#include "dynoc/Codegen/PointwiseLoop.h"
#include "dynoc/Codegen/ScalarExpr.h"
#include "dynoc/Codegen/Target.h"
#include "dynoc/IR/AtenDialect.h"
#include "dynoc/IR/GraphAttrs.h"
#include "dynoc/IR/OpClasses.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <optional>
#include <string>
#include <vector>

namespace dynoc {
namespace codegen {
using namespace mlir;

inline std::string torchDTypeName(Type t) {
  if (t.isF32())
    return "float32";
  if (t.isF64())
    return "float64";
  if (t.isF16())
    return "float16";
  if (t.isBF16())
    return "bfloat16";
  if (t.isInteger(64))
    return "int64";
  if (t.isInteger(32))
    return "int32";
  if (t.isInteger(16))
    return "int16";
  if (t.isInteger(8))
    return t.isUnsignedInteger() ? "uint8" : "int8";
  if (t.isInteger(1))
    return "bool";
  if (t.isUnsignedInteger(8))
    return "uint8_t";
  if (t.isSignlessInteger(8))
    return "int8_t";
  if (t.isSignlessInteger(16))
    return "int16_t";
  return "";
}

/// Escapes `s` for a C++ string literal.
inline std::string cString(const std::string &s) {
  std::string r = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\')
      r += '\\';
    r += c == '\n' ? ' ' : c;
  }
  return r + "\"";
}

/// The C type of a scalar element type, or "" if there is none.
inline std::string cScalarType(Type t) {
  if (t.isF32())
    return "float";
  if (t.isF64())
    return "double";
  if (t.isInteger(64))
    return "int64_t";
  if (t.isInteger(32))
    return "int32_t";
  if (t.isInteger(1))
    return "bool";
  if (t.isUnsignedInteger(8))
    return "uint8_t";
  if (t.isSignlessInteger(8))
    return "int8_t";
  if (t.isSignlessInteger(16))
    return "int16_t";
  return "";
}

inline Type elementTypeOf(Value v) {
  return v.getType().cast<RankedTensorType>().getElementType();
}

/// The C type the CPU backend stores a tensor value's elements in, or "" for
/// a dtype it does not support: the scalar types above, and bf16/f16 as the
/// prelude's 2-byte types (bool is one byte, as in ATen).
inline std::string elemCType(Value v) {
  Type t = elementTypeOf(v);
  if (std::string c = cScalarType(t); !c.empty())
    return c;
  if (t.isBF16())
    return "dynoc_k::bf16";
  if (t.isF16())
    return "dynoc_k::f16";
  return "";
}
inline std::string elemBytes(Value v) {
  Type t = elementTypeOf(v);
  return t.isInteger(1) || t.isInteger(8)        ? "1"
         : t.isBF16() || t.isF16() || t.isInteger(16) ? "2"
         : t.isF32() || t.isInteger(32)               ? "4"
                                                      : "8";
}

inline unsigned dtypeBit(Type t) {
  return t.isF32()         ? kF32
         : t.isF64()       ? kF64
         : t.isInteger(64) ? kI64
         : t.isInteger(32) ? kI32
         : t.isInteger(1)  ? kBool
         : t.isBF16()      ? kBF16
         : t.isF16()       ? kF16
         : t.isUnsignedInteger(8) ? kU8
         : t.isSignlessInteger(8)  ? kI8
         : t.isSignlessInteger(16) ? kI16
                           : 0;
}

/// The scatter family (EmitScatter.cpp), in every dtype.
inline constexpr const char *kScatterOps[] = {
    "aten.scatter.src",        "aten.scatter.value", "aten.scatter.reduce",
    "aten.scatter.value_reduce", "aten.scatter_add",  "aten.scatter_reduce.two",
    "aten.index_add"};

/// Padding, upsampling and adaptive pooling (EmitResampling.cpp): the
/// gathers (pads, nearest) in every dtype, the interpolations f32 and f64.
inline constexpr const char *kResamplingOps[] = {
    "aten.reflection_pad1d",        "aten.reflection_pad2d",
    "aten.reflection_pad3d",        "aten.replication_pad1d",
    "aten.replication_pad2d",       "aten.replication_pad3d",
    "aten.upsample_nearest1d",      "aten.upsample_nearest2d",
    "aten.upsample_nearest3d",      "aten._upsample_nearest_exact1d",
    "aten._upsample_nearest_exact2d", "aten._upsample_nearest_exact3d",
    "aten.upsample_linear1d",       "aten.upsample_bilinear2d",
    "aten.upsample_trilinear3d",    "aten._adaptive_avg_pool2d",
    "aten._adaptive_avg_pool3d"};

/// sort and topk (EmitNN.cpp's emitSort), in every dtype.
inline constexpr const char *kSortOps[] = {"aten.sort", "aten.sort.stable",
                                           "aten.topk"};

/// Which dtypes the kernel libraries run `op` on (a target may run fewer). Data
/// movement takes any of them, bf16 and f16 included; comparisons and selection
/// f32, f64, i64 and bool; arithmetic f32, f64 and i64 (add, mul, maximum and
/// minimum bool too); math functions f32 and f64; GEMMs f32, f64, i64 and
/// i32; the rest (convolution, normalizations) f32 only.
inline unsigned supportedDTypes(Operation *op) {
  static const llvm::StringMap<unsigned> table = [] {
    llvm::StringMap<unsigned> m;
    for (const char *n : {"aten.eq.Tensor", "aten.ne.Tensor", "aten.lt.Tensor",
                          "aten.le.Tensor", "aten.gt.Tensor", "aten.ge.Tensor",
                          "aten.eq.Scalar", "aten.ne.Scalar", "aten.lt.Scalar",
                          "aten.le.Scalar", "aten.gt.Scalar", "aten.ge.Scalar",
                          "aten.where.self", "aten.masked_fill.Scalar",
                          "aten.logical_not", "aten.argmax", "aten.argmin"})
      m[n] = kAnyDType;
    // Its body's ops are checked one by one (emitFusionGroup); conversions
    // let it read and write bf16/f16.
    m["dynoc.fusion_group"] = kMovable;
    for (const char *n :
         {"aten.add.Tensor", "aten.sub.Tensor", "aten.mul.Tensor",
          "aten.div.Tensor", "aten.maximum", "aten.minimum", "aten.add.Scalar",
          "aten.sub.Scalar", "aten.mul.Scalar", "aten.div.Scalar", "aten.neg",
          "aten.abs", "aten.relu"})
      m[n] = kF32 | kF64 | kI64 | kI32;
    // A bool operand promotes (`x * mask`); bool results are logical and/or.
    for (const char *n :
         {"aten.add.Tensor", "aten.mul.Tensor", "aten.maximum", "aten.minimum"})
      m[n] |= kBool;
    for (const char *n : {"aten.nll_loss_forward", "aten.nll_loss2d_forward"})
      m[n] = kF32 | kF64 | kI64 | kI32; // int64 targets
    for (const char *n :
         {"aten.uniform", "aten.normal_functional", "aten.bernoulli.p",
          "aten.bernoulli", "aten.bernoulli.Tensor", "aten.rand", "aten.randn",
          "aten.rand_like", "aten.randn_like"})
      m[n] = kF32 | kF64;
    // Gradient checks run in f64: the backward decompositions' math ops.
    for (const char *n : {"aten.erf", "aten.exp", "aten.tanh"})
      m[n] = kF32 | kF64;
    m["aten.leaky_relu"] = kF32 | kF64;
    for (const char *n :
         {"aten.hardtanh", "aten.clamp", "aten.clamp_min", "aten.clamp_max"})
      m[n] = kF32 | kF64 | kI64 | kI32;
    m["aten.mse_loss"] = kF32 | kF64;
    m["aten.embedding_dense_backward"] = kF32 | kF64 | kI64; // int64 indices
    // Max pooling's int64 indices (a training forward's, its backward's).
    for (const char *n : {"aten.max_pool2d_with_indices",
                          "aten.max_pool2d_with_indices_backward"})
      m[n] = kF32 | kI64;
    m["aten.max_pool2d_with_indices"] |= kF64 | kI32;
    m["aten.cumsum"] = kF32 | kF64 | kI64 | kI32 | kBool;
    // Collectives move elements (DDP broadcasts a bool mask buffer); the
    // reducing ones reduce numbers.
    for (const char *n : {"dynoc.broadcast", "dynoc.all_gather_into_tensor",
                          "dynoc.all_to_all_single", "dynoc.wait_tensor"})
      m[n] = kAnyDType | kBF16 | kF16;
    for (const char *n : {"dynoc.all_reduce", "dynoc.reduce_scatter_tensor"})
      m[n] = (kAnyDType | kBF16 | kF16) & ~kBool;
    m["aten.constant_pad_nd"] = kAnyDType;
    for (const char *n : kScatterOps)
      m[n] = kAnyDType;
    for (const char *n : kSortOps)
      m[n] = kAnyDType; // int64 indices
    for (StringRef n : kResamplingOps)
      m[n] = n.contains("pad") || n.contains("nearest") ? kAnyDType
                                                         : kF32 | kF64;
    for (const char *n : {"aten.bitwise_and.Tensor", "aten.bitwise_or.Tensor",
                          "aten.bitwise_xor.Tensor"})
      m[n] = kI64 | kI32 | kBool;
    m["aten.bitwise_not"] = kI64 | kI32 | kBool;
    m["aten.avg_pool2d"] = kF32;
    m["aten.pow.Tensor_Tensor"] = kF32 | kF64 | kI32 | kI64; // int powers
    for (const char *n : {"aten.mm", "aten.addmm", "aten.linear", "aten.bmm"})
      m[n] = kF32 | kF64 | kI64 | kI32;
    // f64 sums: the gradients of broadcast operands and biases (f64 gradient
    // checks of backward graphs, docs/training.md).
    for (const char *n : {"aten.sum", "aten.sum.dim_IntList", "aten.mean",
                          "aten.mean.dim", "aten.amax", "aten.amin",
                          "aten.prod", "aten.prod.dim_int"})
      m[n] = kAnyDType;
    for (const char *n : {"aten._softmax", "aten._log_softmax"})
      m[n] = kF32 | kF64;
    for (const char *n : {"aten.sigmoid", "aten.tanh", "aten.exp", "aten.gelu",
                          "aten.silu", "aten.sqrt", "aten.rsqrt",
                          "aten.pow.Tensor_Scalar"})
      m[n] = kF32 | kF64;
#define DYNOC_UNARY_FUNCTION(OP, EXPRESSION, DTYPES, ATTRIBUTES) m[OP] = DTYPES;
#include "dynoc/Codegen/UnaryFunctions.def"
#define DYNOC_BINARY_FUNCTION(OP, EXPRESSION, DTYPES) m[OP] = DTYPES;
#include "dynoc/Codegen/BinaryFunctions.def"
    // Rounding division (an integer zero divisor raises: emitDivisorCheck).
    for (const char *n : {"aten.div.Tensor_mode", "aten.div.Scalar_mode"})
      m[n] = kF32 | kF64 | kI64 | kI32;
    // Float functions read integer and bool operands as their values.
    for (const char *n : {"aten.exp", "aten.tanh", "aten.erf", "aten.sigmoid",
                          "aten.sqrt", "aten.rsqrt", "aten.reciprocal"})
      m[n] = kAnyDType;
    return m;
  }();
  if (isDataMovementOp(op))
    return kMovable;
  auto it = table.find(op->getName().getStringRef());
  return it == table.end() ? unsigned(kF32) : it->second;
}

/// The C type ATen computes a comparison or selection in: the promoted type
/// of the operands, where a dimensioned operand outranks a 0-d one of the
/// same category (bool < integer < floating).
inline std::string promotedCType(ArrayRef<Value> operands) {
  auto category = [](Type t) {
    return t.isInteger(1) ? 0 : t.isa<IntegerType>() ? 1 : 2;
  };
  auto rank = [](Value v) {
    return v.getType().cast<RankedTensorType>().getRank();
  };
  Type dimensioned, zeroDim;
  for (Value v : operands) {
    Type t = elementTypeOf(v);
    Type &slot = rank(v) > 0 ? dimensioned : zeroDim;
    if (!slot || category(t) > category(slot) ||
        (category(t) == category(slot) &&
         t.getIntOrFloatBitWidth() > slot.getIntOrFloatBitWidth()))
      slot = t;
  }
  Type t = dimensioned ? dimensioned : zeroDim;
  if (dimensioned && zeroDim && category(zeroDim) > category(dimensioned))
    t = zeroDim; // an int tensor against a Python float computes in float
  return t.isF64()        ? "double"
         : t.isF32()      ? "float"
         : t.isInteger(1) ? "bool"
                          : "int64_t";
}

inline bool isSameShapeCopy(StringRef n) {
  return n == "aten.clone" || n == "aten.contiguous" || n == "aten.alias" ||
         n == "aten.detach" || n == "aten.dropout" ||
         n == "aten.lift_fresh_copy" || n == "aten._to_copy";
}

inline bool isGemm(StringRef n) {
  return n == "aten.mm" || n == "aten.addmm" || n == "aten.linear";
}

/// The value `v` stands for: a fusion group's block argument stands for the
/// group's input.
inline Value sourceOf(Value v) {
  if (auto arg = v.dyn_cast<BlockArgument>())
    if (auto group =
            dyn_cast<dynoc::FusionGroupOp>(arg.getOwner()->getParentOp()))
      return group.getInputs()[arg.getArgNumber()];
  return v;
}

/// Whether every use of `v` is as a matrix operand of a GEMM (B; or A of mm
/// and addmm, whose A is 2-D), looking through fusion groups.
inline bool onlyGemmOperand(Value v) {
  return llvm::all_of(v.getUses(), [&](OpOperand &use) {
    Operation *u = use.getOwner();
    if (auto group = dyn_cast<dynoc::FusionGroupOp>(u))
      return onlyGemmOperand(
          group.getBody().front().getArgument(use.getOperandNumber()));
    StringRef un = u->getName().getStringRef();
    if (!isGemm(un))
      return false;
    unsigned b = un == "aten.addmm" ? 2u : 1u;
    bool aIs2d = un == "aten.mm" || un == "aten.addmm";
    return use.getOperandNumber() == b ||
           (aIs2d && use.getOperandNumber() == b - 1);
  });
}

/// A 2-D transpose whose only users are GEMMs that read it as a matrix
/// operand (the GEMM flips transA or transB instead: backward graphs'
/// mm(t(grad), x) and mm(grad, t(t(W)))).
inline bool isFoldedTranspose(Operation *op) {
  StringRef n = op->getName().getStringRef();
  if (n != "aten.t" && n != "aten.transpose.int")
    return false;
  if (op->getOperand(0).getType().cast<RankedTensorType>().getRank() != 2 ||
      op->getResult(0).use_empty())
    return false;
  return onlyGemmOperand(op->getResult(0));
}

/// An expand to the operand's own shape (matmul's decomposition makes them).
inline bool isIdentityExpand(Operation *op) {
  auto ex = dyn_cast<aten::AtenExpandOp>(op);
  // Sizes given as expressions of the input dims (-1 there does not keep
  // the operand's dim): not known to be the identity.
  if (!ex || op->hasAttr(dynoc::attrs::kSymSizes))
    return false;
  auto in = ex.getSelf().getType().cast<RankedTensorType>().getShape();
  ArrayRef<int64_t> size = ex.getSize();
  if (in.size() != size.size())
    return false;
  for (size_t d = 0; d < in.size(); ++d)
    if (size[d] != -1 && (ShapedType::isDynamic(in[d]) || size[d] != in[d]))
      return false;
  return true;
}

/// Entry `i` (0: height, 1: width) of a 2-D convolution's stride, padding,
/// dilation or output padding: one value stands for both, none is `dflt`.
inline int64_t convPair(ArrayRef<int64_t> v, int64_t dflt, int i) {
  return v.empty() ? dflt : v[v.size() == 1 ? 0 : i];
}

/// A 2-D convolution's window, each (height, width) pair spelled out.
struct Conv2dWindow {
  int64_t sh, sw, ph, pw, dh, dw, oph, opw;
};
inline Conv2dWindow conv2dWindow(aten::AtenConvolutionOp conv) {
  return {convPair(conv.getStride(), 1, 0),
          convPair(conv.getStride(), 1, 1),
          convPair(conv.getPadding(), 0, 0),
          convPair(conv.getPadding(), 0, 1),
          convPair(conv.getDilation(), 1, 0),
          convPair(conv.getDilation(), 1, 1),
          convPair(conv.getOutputPadding(), 0, 0),
          convPair(conv.getOutputPadding(), 0, 1)};
}

class GraphEmitter {
public:
  /// Appends the graph's functions to `os`, the kernels the target prints
  /// at file scope to `definitions` (shared by a module's graphs).
  GraphEmitter(func::FuncOp func, std::string &os, bool allowInPlace,
               const Target &target, KernelDefinitions &definitions)
      : func(func), os(os), allowInPlace(allowInPlace), target(target),
        definitions(definitions) {}

  LogicalResult emit(const std::string &graphBase);

  /// Intermediate bytes the graph needs (its workspace), or -1 when that
  /// depends on dynamic dims.
  int64_t staticWorkspaceBytes = -1;
  /// Ops whose result the memory plan put over a dying operand.
  unsigned inPlaceOps = 0;
  /// One per kernel or library call of the run function, in the order of the
  /// profiling hooks' indices (the manifest's "kernels", docs/manifest.md).
  struct KernelSpan {
    std::string name, category, loc;
    std::vector<std::string> ops;
  };
  std::vector<KernelSpan> kernelSpans;

private:
  using EmitFn = LogicalResult (GraphEmitter::*)(Operation *);

  std::string name(Value v) { return names.lookup(v); }
  /// An error at `op`, its message starting "dynoc build (<target>): ".
  InFlightDiagnostic fail(Operation *op) {
    InFlightDiagnostic d = op->emitError();
    d << "dynoc build (" << target.name() << "): ";
    return d;
  }
  InFlightDiagnostic fail(Operation &op) { return fail(&op); }
  /// A copy: callers keep it across setDims, which may grow (rehash) `dims`.
  DimList dimsOf(Value v) const { return dims.lookup(v); }
  std::string numelOf(Value v) const { return product(dims.lookup(v)); }
  ArrayRef<int64_t> typeShape(Value v) {
    return v.getType().cast<RankedTensorType>().getShape();
  }
  std::string locOf(Operation *op) {
    std::string loc;
    llvm::raw_string_ostream(loc) << op->getLoc();
    return loc;
  }

  /// Records a value the graph resolves at run time; returns its reference.
  std::string resolved(const std::string &expr) {
    resolve += llvm::formatv("  p[{0}] = {1};\n", numPlan, expr).str();
    return "p[" + std::to_string(numPlan++) + "]";
  }
  /// A run-time check of the input shapes; `what` says what went wrong.
  void require(const std::string &cond, Operation *op,
               const std::string &what) {
    resolve += "  if (!(" + cond + "))\n    return " +
               cString(op->getName().getStringRef().str() + " at " + locOf(op) +
                       ": " + what) +
               ";\n";
  }
  /// Sets the dims of `v` from the ones computed from its operands, preferring
  /// the literal dims of its type and checking them at run time.
  void setDims(Value v, Operation *op, const DimList &computed);

  /// Element strides of `v` broadcast to `out` (0 on broadcast dims).
  std::string broadcastStrides(Value v, const DimList &out);
  /// The dims of `op`'s result: its operands' dims broadcast (from the right),
  /// checked at run time where the types leave them open.
  DimList broadcastDims(Operation *op, ArrayRef<Value> operands);

  LogicalResult checkTypes(Operation *op);
  /// A function object, at file scope once per distinct body, whose call
  /// with `params` ("float x", "auto x": a template) returns `expr`: what the
  /// kernel library's elementwise templates take (a lambda would be a new
  /// type, and a new instantiation to compile, at every op).
  std::string functor(const std::string &params, const std::string &expr);
  LogicalResult emitUnary(Operation *op);
  /// `op`'s result as a pointwise loop over its `operands` (read as x0, x1,
  /// ... in `computeType`) whose value is `expr`, for singleOpsAsLoops()
  /// targets.
  void emitAsLoop(Operation *op, ArrayRef<Value> operands,
                  const std::string &computeType, const std::string &expr);
  LogicalResult emitBinary(Operation *op);
  LogicalResult emitScalarBinary(Operation *op);
  LogicalResult emitMatmul(Operation *op);
  LogicalResult emitTranspose(Operation *op);
  LogicalResult emitCopy(Operation *op);
  LogicalResult emitExpand(Operation *op);
  LogicalResult emitDivisorCheck(Operation *op);
  LogicalResult emitAsStrided(Operation *op);
  LogicalResult emitBmm(Operation *op);
  LogicalResult emitConvolution(Operation *op);
  LogicalResult emitBatchNorm(Operation *op);
  LogicalResult emitMaxPool(Operation *op);
  LogicalResult emitAvgPool(Operation *op);
  LogicalResult emitLayerNorm(Operation *op);
  LogicalResult emitSoftmax(Operation *op);
  LogicalResult emitReduction(Operation *op);
  LogicalResult emitStack(Operation *op);
  LogicalResult emitFull(Operation *op);
  LogicalResult emitUnbind(Operation *op);
  LogicalResult emitSplit(Operation *op);
  LogicalResult emitFusionGroup(Operation *op);
  LogicalResult emitEmbedding(Operation *op);
  LogicalResult emitArange(Operation *op);
  LogicalResult emitSliceSelect(Operation *op);
  LogicalResult emitCat(Operation *op);
  LogicalResult emitGather(Operation *op);
  LogicalResult emitPow(Operation *op);
  LogicalResult emitWhere(Operation *op);
  LogicalResult emitArgReduce(Operation *op);
  LogicalResult emitIndex(Operation *op);
  LogicalResult emitIndexPut(Operation *op);
  LogicalResult emitScatter(Operation *op);
  LogicalResult emitSort(Operation *op);
  /// Advanced indexing's addressing, shared by index.Tensor and index_put
  /// (EmitDataMovement.cpp).
  struct IndexPlan {
    DimList shape, inStride;
    std::string idxStrides, ptrs, limits, idxIn;
  };
  LogicalResult indexPlan(Operation *op, Value in, ArrayRef<Value> idx,
                          DenseI64ArrayAttr none, IndexPlan &plan);
  /// An attention op's operands, checked (EmitNN.cpp): shapes, the
  /// grouped-query ratio, the scale, the mask's arguments of the kernels.
  struct AttentionProblem {
    DimList q, k, v;
    std::string group, batchHeads, maskArgs, maskStrides;
    double scale = 0.0;
  };
  LogicalResult attentionProblem(Operation *op, Value query, Value key,
                                 Value value, Value mask,
                                 std::optional<APFloat> dropout,
                                 std::optional<APFloat> scale,
                                 AttentionProblem &a);
  LogicalResult emitAttention(Operation *op);
  LogicalResult emitAttentionBackward(Operation *op);
  // EmitLayers.cpp
  LogicalResult emitNllLoss(Operation *op);
  LogicalResult emitMseLoss(Operation *op);
  LogicalResult emitLstmLayer(Operation *op);
  LogicalResult emitConvTranspose(Operation *op);
  LogicalResult emitConvolutionBackward(Operation *op);
  LogicalResult emitMaxPoolBackward(Operation *op);
  LogicalResult emitEmbeddingBackward(Operation *op);
  // EmitRandom.cpp
  LogicalResult emitRandom(Operation *op);
  // EmitIndexing.cpp
  LogicalResult emitCumsum(Operation *op);
  LogicalResult emitConstantPad(Operation *op);
  LogicalResult emitResampling(Operation *op);
  // EmitCollectives.cpp
  LogicalResult emitCollective(Operation *op);
  LogicalResult emitAllToAll(dynoc::AllToAllSingleOp op);
  LogicalResult emitWaitTensor(Operation *op);

  /// Whether `v` must be computed: it is used or returned.
  bool needed(Value v) { return !v.use_empty() || inOutput.count(v); }
  /// Fails `op` if a result the CPU backend does not compute is needed.
  LogicalResult onlyFirstResult(Operation *op, StringRef what);
  /// Scratch memory for the op being emitted, freed after it; returns the
  /// name of a float pointer to it.
  std::string scratch(const std::string &bytes) {
    std::string n = "s" + std::to_string(scratchRequests.size() + next);
    scratchRequests.push_back({n, bytes});
    return n;
  }
  /// Normalizes a possibly negative dim of a rank-`rank` tensor.
  FailureOr<int64_t> normDim(Operation *op, int64_t dim, int64_t rank);
  /// Entry `k` of the int-array attribute `attr` of `op` as a C++ expression
  /// of the input dims, where capture gave it in dynoc.sym_sizes; empty
  /// where the attribute's own entry holds.
  std::string symSize(Operation *op, StringRef attr, size_t k);
  std::string affineToCpp(AffineExpr e);
  /// The dynamic input dims in argument order: what dynoc.sym_sizes'
  /// symbols stand for.
  std::vector<std::string> symbolDims;

  static const llvm::StringMap<EmitFn> &table();

  func::FuncOp func;
  std::string &os;
  bool allowInPlace;
  const Target &target;
  KernelDefinitions &definitions;
  std::string resolve; // body of the graph's resolve function
  std::string code;    // kernel calls of the op being emitted
  std::string globals; // file-scope state of the graph (oneDNN call sites)
  std::string base;    // the graph's symbol prefix (dynoc_graph_N)
  std::vector<std::pair<std::string, std::string>> scratchRequests;
  unsigned numPlan = 0;
  llvm::DenseMap<Value, std::string> names;
  /// The work handle of each collective's result, for its wait.
  llvm::DenseMap<Value, std::string> collectiveWork;
  llvm::DenseMap<Value, DimList> dims;
  llvm::DenseSet<Value> inOutput;   // values computed into an output buffer
  llvm::DenseSet<Value> scalarArgs; // 0-d non-f32 arguments read as f32
  unsigned next = 0;
  // While an epilogue group's convolution is emitted
  // (Target::fuseConvolutionEpilogue): the clamp [lo, hi] that the ReLU or
  // hardtanh after it hands it, or whether the group's loop adds its bias.
  std::optional<std::pair<double, double>> convClamp;
  bool convBiasInLoop = false;
};

} // namespace codegen
} // namespace dynoc

#endif // DYNOC_CODEGEN_GRAPHEMITTER_H
