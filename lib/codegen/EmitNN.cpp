//===- EmitNN.cpp ---------------------------------------------------------===//
//
// Neural-network ops: convolution (oneDNN), batch norm, max pooling, layer
// norm, softmax, reductions, argmax/argmin, embedding, attention, fills and
// arange.
//
//===----------------------------------------------------------------------===//
#include "GraphEmitter.h"

#include "llvm/ADT/StringSet.h"

#include <numeric>
#include <set>

namespace dynoc {
namespace codegen {

LogicalResult GraphEmitter::emitConvolution(Operation *op) {
  auto conv = cast<aten::AtenConvolutionOp>(op);
  if (conv.getTransposed()) {
    if (!target.transposedConvolution())
      return fail(op) << "transposed convolution is not supported by the "
                      << target.displayName() << " backend yet";
    return emitConvTranspose(op);
  }
  const DimList &in = dimsOf(conv.getInput()), &w = dimsOf(conv.getWeight());
  if (in.size() != 4 || w.size() != 4)
    return fail(op) << "only 2-D convolution (NCHW) "
                       "is supported so far";
  const Conv2dWindow win = conv2dWindow(conv);
  const int64_t sh = win.sh, sw = win.sw, ph = win.ph, pw = win.pw, dh = win.dh,
                dw = win.dw;
  int64_t groups = conv.getGroups();
  if (!isLiteral(w[2]) || !isLiteral(w[3]) || groups < 1)
    return fail(op) << "convolution needs a static "
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
  // Its epilogue group's loop may add the bias instead (EmitElementwise).
  Value bias = convBiasInLoop ? Value() : conv.getBias();
  // The kernel library's convolution primitive (oneDNN's, cached per call
  // site; cuDNN's); where it may refuse a shape (the CPU's), im2col + GEMM.
  std::string site = base + "_conv_site_" + std::to_string(next++);
  globals += "static dynoc_k::ConvSite " + site + ";\n";
  std::string args = llvm::formatv(
      "{0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}, {8}, {9}, {10}, {11}, {12}, "
      "{13}, {14}, {15}",
      name(out), name(conv.getInput()), name(conv.getWeight()),
      bias ? name(bias) : "nullptr", in[0], in[1], in[2], in[3], w[0], R, S,
      dimsOf(out)[2], dimsOf(out)[3], sh, sw, ph);
  // A target whose primitive clamps its output takes the bounds last: those
  // of the ReLU or hardtanh after it (convClamp), else none.
  std::string clamp;
  if (target.fuseConvolutionEpilogue())
    clamp = ", " + fmtFloat(convClamp ? convClamp->first : -INFINITY) + ", " +
            fmtFloat(convClamp ? convClamp->second : INFINITY);
  code += llvm::formatv("  if (int rc = dynoc_k::conv2d_primitive({0}, {1}, "
                        "{2}, {3}, {4}, {5}{6}); rc > 0) return rc;\n",
                        site, args, pw, groups, dh, dw, clamp);
  if (!target.convolutionFallback())
    return success();
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
  code += llvm::formatv("  else if (rc < 0)\n    if (int rc = "
                        "dynoc_k::conv2d({0}, {1}, {2}, {3}, {4}, {5})) "
                        "return rc;\n",
                        args, pw, dh, dw, groups, col);
  return success();
}

LogicalResult GraphEmitter::emitBatchNorm(Operation *op) {
  Value input = op->getOperand(0), weight, bias, mean, var;
  double eps;
  if (auto bn = dyn_cast<aten::AtenNativeBatchNormOp>(op)) {
    if (bn.getTraining())
      return fail(op) << "batch norm in training "
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
    return fail(op) << "batch norm without running statistics";
  if (failed(onlyFirstResult(op, "saved mean/invstd")))
    return failure();
  const DimList &in = dimsOf(input);
  if (in.size() < 2)
    return fail(op) << "batch norm needs rank >= 2";
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

LogicalResult GraphEmitter::emitMaxPool(Operation *op) {
  auto mp = cast<aten::AtenMaxPool2dWithIndicesOp>(op);
  Value indices = op->getResult(1);
  if (!target.poolingIndices() && failed(onlyFirstResult(op, "indices")))
    return failure();
  const bool ceil = mp.getCeilMode() && *mp.getCeilMode();
  const DimList &in = dimsOf(mp.getSelf());
  if (in.size() != 4)
    return fail(op) << "max_pool2d expects NCHW";
  if (ceil && !(isLiteral(in[2]) && isLiteral(in[3])))
    return fail(op) << "max_pool2d with ceil_mode of a dynamic height or "
                       "width is not supported yet";
  auto pair = [&](std::optional<ArrayRef<int64_t>> v, int64_t dflt, int i) {
    return !v || v->empty() ? dflt : (*v)[v->size() == 1 ? 0 : i];
  };
  ArrayRef<int64_t> k = mp.getKernelSize();
  int64_t kh = k[0], kw = k.size() > 1 ? k[1] : k[0];
  int64_t sh = pair(mp.getStride(), kh, 0), sw = pair(mp.getStride(), kw, 1);
  int64_t ph = pair(mp.getPadding(), 0, 0), pw = pair(mp.getPadding(), 0, 1);
  int64_t dh = pair(mp.getDilation(), 1, 0), dw = pair(mp.getDilation(), 1, 1);
  // ATen's pooling_output_shape: with ceil_mode the last window may start
  // past the input, not past its left padding (the kernels bound-check).
  auto outDim = [&](const std::string &x, int64_t p, int64_t d, int64_t kk,
                    int64_t s) {
    if (isLiteral(x)) {
      int64_t n = std::stoll(x), span = n + 2 * p - d * (kk - 1) - 1;
      int64_t o = (ceil ? (span + s - 1) / s : span / s) + 1;
      if (ceil && (o - 1) * s >= n + p)
        --o;
      return std::to_string(o);
    }
    return resolved("(" + x + " + " + std::to_string(2 * p - d * (kk - 1) - 1) +
                    ") / " + std::to_string(s) + " + 1");
  };
  Value out = op->getResult(0);
  setDims(out, op,
          {in[0], in[1], outDim(in[2], ph, dh, kh, sh),
           outDim(in[3], pw, dw, kw, sw)});
  const DimList &o = dimsOf(out);
  std::string window = llvm::formatv("{0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}",
                                     kh, kw, sh, sw, ph, pw, dh, dw);
  if (needed(indices)) {
    // A training forward: the backward reads which element each window took.
    setDims(indices, op, o);
    code += llvm::formatv("  dynoc_k::max_pool2d_indices({0}, {1}, {2}, {3}, "
                          "{4}, {5}, {6}, {7}, {8});\n",
                          name(out), name(indices), name(mp.getSelf()),
                          product({in[0], in[1]}), in[2], in[3], o[2], o[3],
                          window);
    return success();
  }
  code += llvm::formatv(
      "  dynoc_k::max_pool2d({0}, {1}, {2}, {3}, {4}, {5}, {6}, {7});\n",
      name(out), name(mp.getSelf()), product({in[0], in[1]}), in[2], in[3],
      o[2], o[3], window);
  return success();
}

LogicalResult GraphEmitter::emitAvgPool(Operation *op) {
  auto ap = cast<aten::AtenAvgPool2dOp>(op);
  const DimList &in = dimsOf(ap.getSelf());
  if (in.size() != 4)
    return fail(op) << "avg_pool2d expects NCHW";
  if (!isLiteral(in[2]) || !isLiteral(in[3]))
    return fail(op) << "avg_pool2d of dynamic height or width is not "
                       "supported yet";
  auto pair = [&](std::optional<ArrayRef<int64_t>> v, int64_t dflt, int i) {
    return !v || v->empty() ? dflt : (*v)[v->size() == 1 ? 0 : i];
  };
  ArrayRef<int64_t> k = ap.getKernelSize();
  int64_t kh = k[0], kw = k.size() > 1 ? k[1] : k[0];
  int64_t sh = pair(ap.getStride(), kh, 0), sw = pair(ap.getStride(), kw, 1);
  int64_t ph = pair(ap.getPadding(), 0, 0), pw = pair(ap.getPadding(), 0, 1);
  // The output size is the graph's (ceil_mode included); the kernel handles
  // windows that start in the padding.
  auto outType = op->getResult(0).getType().cast<RankedTensorType>();
  if (!outType.hasStaticShape())
    return fail(op) << "avg_pool2d with a dynamic output is not supported yet";
  Value out = op->getResult(0);
  setDims(out, op,
          {in[0], in[1], std::to_string(outType.getDimSize(2)),
           std::to_string(outType.getDimSize(3))});
  const DimList &o = dimsOf(out);
  bool countPad = ap.getCountIncludePad().value_or(true);
  int64_t divisor = ap.getDivisorOverride().value_or(0);
  code += llvm::formatv(
      "  dynoc_k::avg_pool2d({0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}, {8}, {9}, "
      "{10}, {11}, {12}, {13}, {14});\n",
      name(out), name(ap.getSelf()), product({in[0], in[1]}), in[2], in[3],
      o[2], o[3], kh, kw, sh, sw, ph, pw, countPad ? "true" : "false", divisor);
  return success();
}

LogicalResult GraphEmitter::emitLayerNorm(Operation *op) {
  auto ln = cast<aten::AtenNativeLayerNormOp>(op);
  if (failed(onlyFirstResult(op, "mean/rstd")))
    return failure();
  const DimList &in = dimsOf(ln.getInput());
  size_t k = ln.getNormalizedShape().size();
  if (k == 0 || k > in.size())
    return fail(op) << "bad normalized_shape";
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

LogicalResult GraphEmitter::emitSoftmax(Operation *op) {
  Value in = op->getOperand(0), out = op->getResult(0);
  if (op->getAttrOfType<BoolAttr>("half_to_float") &&
      op->getAttrOfType<BoolAttr>("half_to_float").getValue())
    return fail(op) << "half_to_float softmax";
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

/// sum, mean, amax, amin, prod over one run of adjacent dims (all dims when the op
/// names none): the input is viewed as (outer, n, inner).
LogicalResult GraphEmitter::emitReduction(Operation *op) {
  StringRef n = op->getName().getStringRef();
  Value in = op->getOperand(0), out = op->getResult(0);
  // A `dtype` is the result's type, which the kernel accumulates for.
  const DimList &d = dimsOf(in);
  int64_t rank = d.size();
  std::vector<bool> reduced(rank, false);
  // `dim` is a list (sum.dim_IntList), one int (prod.dim_int) or absent.
  SmallVector<int64_t> dimList;
  if (auto list = op->getAttrOfType<DenseI64ArrayAttr>("dim"))
    dimList.assign(list.asArrayRef().begin(), list.asArrayRef().end());
  else if (auto one = op->getAttrOfType<IntegerAttr>("dim"))
    dimList.push_back(one.getInt());
  if (dimList.empty()) {
    reduced.assign(rank, true);
  } else {
    for (int64_t x : dimList) {
      auto dim = normDim(op, x, rank);
      if (failed(dim))
        return failure();
      if (rank > 0) // over a 0-d tensor's dim 0: the value itself
        reduced[*dim] = true;
    }
  }
  int64_t first = -1, last = -1;
  for (int64_t i = 0; i < rank; ++i)
    if (reduced[i]) {
      if (first < 0)
        first = i;
      else if (last != i - 1)
        return fail(op)
               << "'" << n
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
             : n == "aten.amin"          ? 3
                                         : 4; // prod
  code += llvm::formatv("  dynoc_k::reduce({0}, {1}, {2}, {3}, {4}, {5});\n",
                        name(out), name(in), outer, len, inner, kind);
  return success();
}

/// argmax/argmin over one dim (kept as 1 with keepdim) or over all elements.
LogicalResult GraphEmitter::emitArgReduce(Operation *op) {
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

/// sort, sort.stable and topk along one dim: values and indices.
LogicalResult GraphEmitter::emitSort(Operation *op) {
  StringRef n = op->getName().getStringRef();
  Value in = op->getOperand(0), values = op->getResult(0),
        indices = op->getResult(1);
  bool topk = n == "aten.topk";
  if (topk && scalarAttr(op, "sorted", 1) == 0)
    return fail(op) << "topk with sorted=False is not supported yet (eager's "
                       "order is unspecified there)";
  bool descending = topk ? scalarAttr(op, "largest", 1) != 0
                         : scalarAttr(op, "descending", 0) != 0;
  // sort.stable's flag; sort and topk follow ATen's unstable CPU sort.
  bool stable = scalarAttr(op, "stable", 0) != 0;
  DimList d = dimsOf(in);
  const bool scalar = d.empty(); // a 0-d tensor sorts as one element
  if (scalar)
    d = {"1"};
  auto dim = normDim(op, int64_t(scalarAttr(op, "dim", -1)), d.size());
  if (failed(dim))
    return failure();
  std::string k = topk ? std::to_string(int64_t(scalarAttr(op, "k", 0))) : "-1";
  DimList outDims = scalar ? DimList{} : dimsOf(in);
  if (topk && !scalar)
    outDims[*dim] = k;
  setDims(values, op, outDims);
  setDims(indices, op, outDims);
  ArrayRef<std::string> all(d);
  std::string ct = elemCType(in);
  code += llvm::formatv(
      "  if (int rc = dynoc_k::sort_rows({0}, {1}, {2}, {3}, {4}, {5}, {6}, "
      "{7}, {8})) return rc;\n",
      needed(values) ? name(values) : "static_cast<" + ct + " *>(nullptr)",
      needed(indices) ? name(indices) : "static_cast<int64_t *>(nullptr)",
      name(in), product(all.take_front(*dim)), d[*dim],
      product(all.drop_front(*dim + 1)), k, descending ? "true" : "false",
      stable ? "true" : "false");
  return success();
}

LogicalResult GraphEmitter::emitEmbedding(Operation *op) {
  auto emb = cast<aten::AtenEmbeddingOp>(op);
  const DimList &w = dimsOf(emb.getWeight()), &idx = dimsOf(emb.getIndices());
  auto it =
      emb.getIndices().getType().cast<RankedTensorType>().getElementType();
  if (w.size() != 2 || !it.isInteger(64))
    return fail(op) << "embedding needs a 2-D table "
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

LogicalResult GraphEmitter::attentionProblem(Operation *op, Value query,
                                             Value key, Value value,
                                             Value mask,
                                             std::optional<APFloat> dropout,
                                             std::optional<APFloat> scaleAttr,
                                             AttentionProblem &a) {
  // f32, or the graph's bf16/f16 where the target computes attention in it.
  Type maskType = mask ? elementTypeOf(mask) : Type();
  if (mask && (dimsOf(mask).size() != 4 ||
               !(maskType.isF32() || maskType.isBF16() || maskType.isF16())))
    return fail(op) << "attention's attn_mask must "
                       "be a 4-D f32 (additive) mask";
  if (dropout && *dropout != APFloat(0.0))
    return fail(op) << "attention with dropout";
  const DimList &q = dimsOf(query), &k = dimsOf(key), &v = dimsOf(value);
  if (q.size() != 4 || k.size() != 4 || v.size() != 4)
    return fail(op) << "attention expects "
                       "(batch, heads, length, dim) operands";
  a.q = q, a.k = k, a.v = v;
  // Grouped-query attention: key and value may hold fewer heads, each shared
  // by q_heads / kv_heads query heads. Batch and key/value heads must agree.
  a.group = "1";
  if (k[1] != q[1] || v[1] != q[1]) {
    if (k[1] != v[1] || !isLiteral(q[1]) || !isLiteral(k[1]))
      return fail(op) << "attention with " << k[1] << " key and " << v[1]
                      << " value heads for " << q[1]
                      << " query heads (grouped-query attention needs static, "
                         "equal key and value head counts)";
    int64_t qh = std::stoll(q[1]), kvh = std::stoll(k[1]);
    if (kvh <= 0 || qh % kvh != 0)
      return fail(op) << "attention with " << qh << " query heads and " << kvh
                      << " key/value heads (query heads must be a multiple)";
    a.group = std::to_string(qh / kvh);
  }
  auto differ = [](const std::string &x, const std::string &y) {
    return isLiteral(x) && isLiteral(y) && x != y;
  };
  if (differ(k[0], q[0]) || differ(v[0], q[0]) || differ(k[2], v[2]))
    return fail(op) << "attention with query batch " << q[0] << ", key batch "
                    << k[0] << ", value batch " << v[0] << ", key length "
                    << k[2] << " and value length " << v[2]
                    << " (batches and key/value lengths must be equal)";
  a.scale = scaleAttr ? scaleAttr->convertToDouble()
            : isLiteral(q[3]) ? 1.0 / std::sqrt(double(std::stoll(q[3])))
                              : 0.0;
  if (a.scale == 0.0)
    return fail(op) << "attention needs a static "
                       "head dim or a scale";
  a.batchHeads = product({q[0], q[1]});
  a.maskArgs = llvm::formatv(", {0}, ms, {1}, {2}",
                             mask ? name(mask) : "(const float *)nullptr", q[1],
                             a.group)
                   .str();
  a.maskStrides =
      mask ? broadcastStrides(mask, {q[0], q[1], q[2], k[2]}) : "{0, 0, 0, 0}";
  return success();
}

LogicalResult GraphEmitter::emitAttention(Operation *op) {
  auto sdpa = cast<aten::ScaledDotProductFlashAttentionForCpuOp>(op);
  Value lse = op->getResult(1);
  const bool withLse = !lse.use_empty();
  if (withLse && !target.attentionLogsumexp() &&
      failed(onlyFirstResult(op, "logsumexp")))
    return failure();
  AttentionProblem a;
  if (failed(attentionProblem(op, sdpa.getQuery(), sdpa.getKey(),
                              sdpa.getValue(), sdpa.getAttnMask(),
                              sdpa.getDropoutP(), sdpa.getScale(), a)))
    return failure();
  Value out = op->getResult(0);
  setDims(out, op, {a.q[0], a.q[1], a.q[2], a.v[3]});
  if (withLse)
    setDims(lse, op, {a.q[0], a.q[1], a.q[2]});
  std::string scores = scratch(product({a.batchHeads, a.q[2], a.k[2], "4"}));
  bool causal = sdpa.getIsCausal() && *sdpa.getIsCausal();
  code += llvm::formatv(
      "  {{ const int64_t ms[] = {13};\n"
      "    if (int rc = dynoc_k::attention({0}, {1}, {2}, {3}, {4}, {5}, {6}, "
      "{7}, {8}, {9}, {10}, {11}{12}{14})) return rc; }\n",
      name(out), name(sdpa.getQuery()), name(sdpa.getKey()),
      name(sdpa.getValue()), a.batchHeads, a.q[2], a.k[2], a.q[3], a.v[3],
      llvm::formatv("{0:e17}", a.scale).str(), causal ? "true" : "false",
      scores, a.maskArgs, a.maskStrides,
      withLse ? ", " + name(lse) : std::string());
  return success();
}

/// The gradients of query, key and value: the probabilities computed again
/// from the operands (the logsumexp operand is not read: the forward kernels
/// do not keep one).
LogicalResult GraphEmitter::emitAttentionBackward(Operation *op) {
  auto bw = cast<aten::ScaledDotProductFlashAttentionForCpuBackwardOp>(op);
  AttentionProblem a;
  if (failed(attentionProblem(op, bw.getQuery(), bw.getKey(), bw.getValue(),
                              bw.getAttnMask(), bw.getDropoutP(),
                              bw.getScale(), a)))
    return failure();
  for (unsigned i = 0; i < 3; ++i)
    setDims(op->getResult(i), op, dimsOf(op->getOperand(1 + i)));
  std::string scores =
      scratch(product({a.batchHeads, a.q[2], a.k[2], "8"})); // P and dS
  code += llvm::formatv(
      "  {{ const int64_t ms[] = {16};\n"
      "    if (int rc = dynoc_k::attention_backward({0}, {1}, {2}, {3}, {4}, "
      "{5}, {6}, {7}, {8}, {9}, {10}, {11}, {12}, {13}, {14}, {15}{17})) "
      "return rc; }\n",
      name(op->getResult(0)), name(op->getResult(1)), name(op->getResult(2)),
      name(bw.getGradOut()), name(bw.getQuery()), name(bw.getKey()),
      name(bw.getValue()), name(bw.getOut_()), a.batchHeads, a.q[2], a.k[2],
      a.q[3], a.v[3], llvm::formatv("{0:e17}", a.scale).str(),
      bw.getIsCausal() ? "true" : "false", scores, a.maskStrides, a.maskArgs);
  return success();
}

LogicalResult GraphEmitter::emitArange(Operation *op) {
  Value out = op->getResult(0);
  auto num = [&](StringRef n, double dflt) { return scalarAttr(op, n, dflt); };
  double start = num("start", 0), end = num("end", 0), step = num("step", 1);
  if (step == 0)
    return fail(op) << "arange with step 0";
  std::string symEnd = symSize(op, "end", 0);
  if (!symEnd.empty()) {
    // An end that depends on the input dims (dynoc.sym_sizes).
    if (start != std::floor(start) || step != std::floor(step) || step <= 0)
      return fail(op) << "arange with a symbolic "
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
LogicalResult GraphEmitter::emitFull(Operation *op) {
  Value out = op->getResult(0);
  StringRef n = op->getName().getStringRef();
  if (n.endswith("_like") || n == "aten.zero") {
    setDims(out, op, dimsOf(op->getOperand(0)));
  } else if (n == "aten.scalar_tensor") {
    setDims(out, op, {});
  } else {
    auto size = op->getAttrOfType<DenseI64ArrayAttr>("size");
    if (!size)
      return fail(op) << "'" << n << "' without a size";
    DimList d;
    for (auto [k, x] : llvm::enumerate(size.asArrayRef())) {
      std::string sym = x == -1 ? symSize(op, "size", k) : std::string();
      if (x == -1 && sym.empty())
        return fail(op) << "'" << n << "' has size -1 in dim " << k
                        << " and no expression for it";
      d.push_back(x == -1 ? sym : std::to_string(x));
    }
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

} // namespace codegen
} // namespace dynoc
