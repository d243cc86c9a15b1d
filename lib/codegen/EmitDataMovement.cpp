//===- EmitDataMovement.cpp -----------------------------------------------===//
//
// Data movement: transposes, copies and casts, expand, as_strided, stack,
// unbind, split, slice/select, cat, gather and advanced indexing.
//
//===----------------------------------------------------------------------===//
#include "GraphEmitter.h"

#include "llvm/ADT/StringSet.h"

#include <numeric>
#include <set>

namespace dynoc {
namespace codegen {

LogicalResult GraphEmitter::emitTranspose(Operation *op) {
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
      return fail(op) << "transpose needs dim0 and dim1";
    if (norm(d0.getInt()) >= rank || norm(d1.getInt()) >= rank ||
        norm(d0.getInt()) < 0 || norm(d1.getInt()) < 0)
      return fail(op) << "transpose dims out of range";
    std::swap(perm[norm(d0.getInt())], perm[norm(d1.getInt())]);
  } else {
    auto pd = op->getAttrOfType<DenseI64ArrayAttr>("dims");
    if (!pd || (int64_t)pd.size() != rank)
      return fail(op) << "permute needs " << rank << " dims";
    for (int64_t i = 0; i < rank; ++i) {
      perm[i] = norm(pd[i]);
      if (perm[i] < 0 || perm[i] >= rank)
        return fail(op) << "permute dim out of range";
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

LogicalResult GraphEmitter::emitCopy(Operation *op) {
  Value in = op->getOperand(0), out = op->getResult(0);
  StringRef n = op->getName().getStringRef();
  if (n == "aten.dropout" && scalarAttr(op, "train", 0.0) != 0.0)
    return fail(op) << "dropout in training mode is "
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
      return fail(op) << "'aten.view_as' changes the element count";
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
          return fail(op)
                 << "'" << n
                 << "' has more than one dynamic dim in its result; the "
                 << target.displayName()
                 << " "
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
      return fail(op) << "'" << n << "' changes the element count";
    }
    setDims(out, op, computed);
  }
  if (elemCType(in) != elemCType(out))
    code += llvm::formatv("  dynoc_k::convert({0}, {1}, {2});\n", name(out),
                          name(in), numelOf(out));
  else if (inOutput.count(out))
    code += llvm::formatv("  dynoc_k::copy({0}, {1}, {2} * sizeof({3}));\n",
                          name(out), name(in), numelOf(out), elemCType(out));
  return success();
}

LogicalResult GraphEmitter::emitExpand(Operation *op) {
  Value self = op->getOperand(0);
  const DimList &in = dimsOf(self);
  // The target dims: expand's size (-1 keeps the operand's dim), or
  // expand_as's other operand's dims.
  DimList targetDims;
  if (auto ex = dyn_cast<aten::AtenExpandOp>(op)) {
    for (auto [k, s] : llvm::enumerate(ex.getSize()))
      targetDims.push_back(s != -1 ? std::to_string(s)
                                   : symSize(op, "size", k));
  } else {
    targetDims = dimsOf(op->getOperand(1));
  }
  if (targetDims.size() < in.size())
    return fail(op) << "expand to fewer dims";
  DimList computed;
  size_t lead = targetDims.size() - in.size();
  for (size_t d = 0; d < targetDims.size(); ++d) {
    if (d >= lead && (targetDims[d].empty() || targetDims[d] == in[d - lead]))
      computed.push_back(in[d - lead]);
    else if (targetDims[d].empty())
      return fail(op) << "expand with -1 in a new dim";
    else {
      // Only a dim of size 1 expands (ATen's rule).
      const std::string from = d >= lead ? in[d - lead] : "1";
      if (from != "1" && isLiteral(from) && isLiteral(targetDims[d]))
        return fail(op) << "dim " << d << " of size " << from
                        << " cannot expand to " << targetDims[d];
      if (from != "1")
        require("(" + from + " == 1 || " + from + " == " + targetDims[d] + ")",
                op, "a dim of size other than 1 cannot expand");
      computed.push_back(targetDims[d]);
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

/// as_strided(x, size, stride, offset): a strided gather from x's elements in
/// their dense layout (capture records it only where x's storage is that
/// layout, capture/op_facts.py), every element read checked to be one of x's.
LogicalResult GraphEmitter::emitAsStrided(Operation *op) {
  auto view = cast<aten::AtenAsStridedOp>(op);
  Value in = view.getSelf(), out = op->getResult(0);
  ArrayRef<int64_t> size = view.getSize(), stride = view.getStride();
  const int64_t offset = view.getStorageOffset().value_or(0);
  if (size.size() != stride.size())
    return fail(op) << "as_strided with " << size.size() << " sizes and "
                    << stride.size() << " strides";
  std::string numel = numelOf(in);
  if (!isLiteral(numel))
    return fail(op) << "as_strided of a tensor of dynamic size";
  int64_t first = offset, last = offset;
  bool empty = false;
  for (auto [n, s] : llvm::zip(size, stride)) {
    empty |= n == 0;
    (s < 0 ? first : last) += (n - 1) * s;
  }
  if (!empty && (first < 0 || last >= std::stoll(numel)))
    return fail(op) << "as_strided reads elements " << first << " to " << last
                    << " of a tensor of " << numel;
  DimList dims;
  for (int64_t n : size)
    dims.push_back(std::to_string(n));
  setDims(out, op, dims);
  if (empty)
    return success();
  if (dims.empty()) { // one element
    code += llvm::formatv("  dynoc_k::copy({0}, {1} + {2}, sizeof({3}));\n",
                          name(out), name(in), offset, elemCType(out));
    return success();
  }
  DimList strides;
  for (int64_t s : stride)
    strides.push_back(std::to_string(s));
  code +=
      llvm::formatv("  {{ const int64_t s[] = {0}, shape[] = {1};\n"
                    "    dynoc_k::broadcast_copy({2}, {3} + {4}, s, shape, "
                    "{5}); }\n",
                    braceList(strides), braceList(dims), name(out), name(in),
                    offset, dims.size());
  return success();
}

/// stack: a cat along a new dim, each input one slice of it.
LogicalResult GraphEmitter::emitStack(Operation *op) {
  auto stack = cast<aten::AtenStackOp>(op);
  Value out = op->getResult(0);
  auto tensors = stack.getTensors();
  if (tensors.empty())
    return fail(op) << "stack of nothing";
  DimList d = dimsOf(tensors.front());
  for (Value t : tensors)
    if (dimsOf(t).size() != d.size())
      return fail(op) << "stack of different ranks";
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
LogicalResult GraphEmitter::emitUnbind(Operation *op) {
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

LogicalResult GraphEmitter::emitSplit(Operation *op) {
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

LogicalResult GraphEmitter::emitSliceSelect(Operation *op) {
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
    return fail(op) << "a slice start that depends "
                       "on the input dims is not supported yet";
  std::string symEnd = select ? "" : symSize(op, "end", 0);
  int64_t step = select ? 1 : get("step", 1);
  if (step < 1)
    return fail(op) << "slice step must be >= 1";
  std::string startText, lenText;
  if (isLiteral(d[*dim]) && symEnd.empty()) {
    int64_t size = std::stoll(d[*dim]), start, len;
    if (select) {
      start = get("index", 0);
      if (start < 0)
        start += size;
      if (start < 0 || start >= size)
        return fail(op) << "select index out of range";
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

LogicalResult GraphEmitter::emitCat(Operation *op) {
  auto cat = cast<aten::AtenCatOp>(op);
  Value out = op->getResult(0);
  // Zero-size 1-D operands are legacy "empty" tensors that cat skips.
  SmallVector<Value> parts;
  for (Value t : cat.getTensors())
    if (!(dimsOf(t).size() == 1 && dimsOf(t)[0] == "0"))
      parts.push_back(t);
  if (parts.empty())
    return fail(op) << "cat of nothing";
  const DimList &first = dimsOf(parts.front());
  auto dim = normDim(op, cat.getDim() ? *cat.getDim() : 0, first.size());
  if (failed(dim))
    return failure();
  SmallVector<std::string> lens;
  for (Value t : parts) {
    if (dimsOf(t).size() != first.size())
      return fail(op) << "cat of different ranks";
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

LogicalResult GraphEmitter::emitGather(Operation *op) {
  auto g = cast<aten::AtenGatherOp>(op);
  const DimList &in = dimsOf(g.getSelf()), &idx = dimsOf(g.getIndex());
  if (in.size() != idx.size() || in.empty())
    return fail(op) << "gather needs index of the "
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

/// Advanced indexing's addressing (index.Tensor reads through it,
/// index_put writes through it): int64 index tensors at the input dims
/// `pos` (the others None) broadcast to one shape B; their positions in the
/// input either form one run (the indexed shape is the dims before it, B, the
/// dims after) or not (B first, then the other dims), as in ATen. Fills
/// `plan`: the indexed shape, the input stride of each of its dims (0 on B's),
/// and the kernels' index arguments.
LogicalResult GraphEmitter::indexPlan(Operation *op, Value in,
                                      ArrayRef<Value> idx,
                                      DenseI64ArrayAttr noneAttr,
                                      IndexPlan &plan) {
  const DimList &d = dimsOf(in);
  int64_t rank = d.size();
  std::set<int64_t> none;
  if (noneAttr)
    none.insert(noneAttr.asArrayRef().begin(), noneAttr.asArrayRef().end());
  SmallVector<int64_t> pos;
  for (int64_t p = 0; (int64_t)pos.size() < (int64_t)idx.size(); ++p)
    if (!none.count(p))
      pos.push_back(p);
  StringRef what = op->getName().getStringRef().drop_front(5); // "aten."
  if (idx.empty() || pos.back() >= rank)
    return fail(op) << what << " with " << idx.size()
                    << " index tensors on rank " << rank;
  if (idx.size() > 4) // the CUDA kernels' IndexPlan
    return fail(op) << what << " with more than 4 index tensors";
  for (Value v : idx)
    if (!elementTypeOf(v).isInteger(64))
      return fail(op)
             << what << " with a " << elementTypeOf(v)
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
        return fail(op) << "index tensors of dims " << o << " and " << vd[i]
                        << " do not broadcast";
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
  auto isIndexed = [&](int64_t k) { return llvm::is_contained(pos, k); };
  plan = IndexPlan();
  int64_t k = 0;
  for (; k < at; ++k)
    if (!isIndexed(k)) {
      plan.shape.push_back(d[k]);
      plan.inStride.push_back(inStrides[k]);
    }
  size_t bStart = plan.shape.size();
  for (auto &bd : b) {
    plan.shape.push_back(bd);
    plan.inStride.push_back("0");
  }
  for (; k < rank; ++k)
    if (!isIndexed(k)) {
      plan.shape.push_back(d[k]);
      plan.inStride.push_back(inStrides[k]);
    }
  if (plan.shape.size() > 8) // the CUDA kernels' IndexPlan
    return fail(op) << what << " over more than 8 dims";
  for (auto [j, v] : llvm::enumerate(idx)) {
    // v's strides over B, placed at B's dims of the indexed shape.
    DimList bDims(b.begin(), b.end());
    std::string sv = broadcastStrides(v, bDims);
    DimList row(plan.shape.size(), "0");
    SmallVector<StringRef> parts;
    StringRef(sv).drop_front().drop_back().split(parts, ", ");
    for (size_t i = 0; i < bRank && i < parts.size(); ++i)
      row[bStart + i] = parts[i].str();
    for (auto &r : row)
      plan.idxStrides += (plan.idxStrides.empty() ? "" : ", ") + r;
    plan.ptrs += (j ? ", " : "") + name(v);
    plan.limits += (j ? ", " : "") + d[pos[j]];
    plan.idxIn += (j ? ", " : "") + inStrides[pos[j]];
  }
  return success();
}

LogicalResult GraphEmitter::emitIndex(Operation *op) {
  auto ix = cast<aten::AtenIndexTensorOp>(op);
  Value in = ix.getSelf(), out = op->getResult(0);
  SmallVector<Value> idx(ix.getIndices().begin(), ix.getIndices().end());
  IndexPlan plan;
  if (failed(indexPlan(op, in, idx, ix.getIndicesNoneAttr(), plan)))
    return failure();
  setDims(out, op, plan.shape);
  const DimList &outDims = dimsOf(out);
  if (outDims.empty())
    return fail(op) << "index.Tensor with a 0-d "
                       "result is not supported yet";
  code += llvm::formatv(
      "  {{ const int64_t shape[] = {0}, ins[] = {1}, ist[] = {{{2}}, "
      "lim[] = {{{3}}, iin[] = {{{4}};\n"
      "    const int64_t *const ip[] = {{{5}};\n"
      "    if (int rc = dynoc_k::index_gather({6}, {7}, shape, {8}, ins, {9}, "
      "ip, ist, lim, iin)) return rc; }\n",
      braceList(outDims), braceList(plan.inStride), plan.idxStrides,
      plan.limits, plan.idxIn, plan.ptrs, name(out), name(in), outDims.size(),
      idx.size());
  return success();
}

/// index_put(self, indices, values, accumulate): self with the elements that
/// index.Tensor(self, indices) would read replaced by (or, accumulate, added
/// to) `values` broadcast to that shape. transformers' static KV cache
/// (index_copy_, decomposed into this) and gpt-fast's `k[:, :, pos] = v`.
LogicalResult GraphEmitter::emitIndexPut(Operation *op) {
  auto ip = cast<aten::AtenIndexPutOp>(op);
  Value in = ip.getSelf(), values = ip.getValues(), out = op->getResult(0);
  if (elementTypeOf(values) != elementTypeOf(in))
    return fail(op) << "index_put of " << elementTypeOf(values)
                    << " values into a " << elementTypeOf(in) << " tensor";
  SmallVector<Value> idx(ip.getIndices().begin(), ip.getIndices().end());
  IndexPlan plan;
  if (failed(indexPlan(op, in, idx, ip.getIndicesNoneAttr(), plan)))
    return failure();
  setDims(out, op, dimsOf(in));
  if (dimsOf(values).size() > plan.shape.size())
    return fail(op) << "index_put values of rank " << dimsOf(values).size()
                    << " for an indexed shape of rank " << plan.shape.size();
  bool accumulate = ip.getAccumulate().value_or(false);
  if (name(out) != name(in))
    code += llvm::formatv("  dynoc_k::copy({0}, {1}, {2} * sizeof({3}));\n",
                          name(out), name(in), numelOf(in), elemCType(in));
  code += llvm::formatv(
      "  {{ const int64_t shape[] = {0}, ins[] = {1}, vs[] = {2}, "
      "ist[] = {{{3}}, lim[] = {{{4}}, iin[] = {{{5}};\n"
      "    const int64_t *const ip[] = {{{6}};\n"
      "    if (int rc = dynoc_k::index_scatter({7}, {8}, shape, {9}, ins, vs, "
      "{10}, ip, ist, lim, iin, {11})) return rc; }\n",
      braceList(plan.shape), braceList(plan.inStride),
      broadcastStrides(values, plan.shape), plan.idxStrides, plan.limits,
      plan.idxIn, plan.ptrs, name(out), name(values), plan.shape.size(),
      idx.size(), accumulate ? "true" : "false");
  return success();
}

} // namespace codegen
} // namespace dynoc
