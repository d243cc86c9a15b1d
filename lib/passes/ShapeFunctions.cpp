//===- ShapeFunctions.cpp - result shapes and dtypes of aten ops ----------===//
//
// A table from op name to shape rule. Rules follow ATen's own shape logic
// (broadcasting, view with -1, convolution and pooling output sizes, slice
// clamping) in affine expressions of the graph's dim symbols, so a dynamic
// dim flows through as `s0`, `s0 * 8 floordiv 4`, `s0 + s1`.
//
//===----------------------------------------------------------------------===//
#include "dynoc/Passes/ShapeFunctions.h"
#include "dynoc/IR/GraphAttrs.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <cmath>
#include <limits>
#include <optional>

using namespace mlir;
using dynoc::SymbolicShape;

namespace {

using Shapes = SmallVectorImpl<SymbolicShape>;
using Rule = LogicalResult (*)(Operation *, ArrayRef<SymbolicShape>, Shapes &);

AffineExpr cst(Operation *op, int64_t v) {
  return getAffineConstantExpr(v, op->getContext());
}

std::optional<int64_t> constOf(AffineExpr e) {
  if (auto c = e.dyn_cast_or_null<AffineConstantExpr>())
    return c.getValue();
  return std::nullopt;
}

bool isConst(AffineExpr e, int64_t v) { return constOf(e) == v; }

int64_t intAttr(Operation *op, StringRef name, int64_t dflt) {
  if (auto a = op->getAttrOfType<IntegerAttr>(name))
    return a.getInt();
  return dflt;
}

bool boolAttr(Operation *op, StringRef name, bool dflt) {
  if (auto a = op->getAttrOfType<BoolAttr>(name))
    return a.getValue();
  return dflt;
}

std::optional<ArrayRef<int64_t>> arrayAttr(Operation *op, StringRef name) {
  if (auto a = op->getAttrOfType<DenseI64ArrayAttr>(name))
    return a.asArrayRef();
  return std::nullopt;
}

/// ATen's dim wrapping: -1 is the last of `rank` dims.
FailureOr<int64_t> wrapDim(Operation *op, int64_t dim, int64_t rank) {
  int64_t r = std::max<int64_t>(rank, 1);
  if (dim < -r || dim >= r)
    return op->emitError() << "dim " << dim << " is out of range for rank "
                           << rank;
  return dim < 0 ? dim + r : dim;
}

std::string dimText(AffineExpr e) {
  if (!e)
    return "?";
  std::string s;
  llvm::raw_string_ostream os(s);
  e.print(os);
  return os.str();
}

/// The product of `dims`, or null if one is unknown.
AffineExpr product(Operation *op, ArrayRef<AffineExpr> dims) {
  AffineExpr p = cst(op, 1);
  for (AffineExpr d : dims) {
    if (!d)
      return {};
    p = p * d;
  }
  return p;
}

/// One broadcast dim from two: 1 yields to the other, equal dims stay, two
/// different constants are an error. Two different symbolic dims have no
/// affine form (the result is whichever is not 1): left open.
FailureOr<AffineExpr> broadcastDim(Operation *op, AffineExpr a, AffineExpr b,
                                   size_t fromRight) {
  if (isConst(a, 1))
    return b;
  if (isConst(b, 1))
    return a;
  if (!a || !b)
    return AffineExpr();
  if (a == b)
    return a;
  auto ca = constOf(a), cb = constOf(b);
  if (ca && cb)
    return op->emitError() << "the operands do not broadcast: dim -"
                           << fromRight << " is " << *ca << " and " << *cb;
  // A symbol against a constant other than 1: the symbol must be that
  // constant or 1 (the generated code checks it), so the result is it.
  if (ca)
    return a;
  if (cb)
    return b;
  return AffineExpr();
}

FailureOr<SymbolicShape> broadcast(Operation *op,
                                   ArrayRef<SymbolicShape> shapes) {
  size_t rank = 0;
  for (auto &s : shapes)
    rank = std::max(rank, s.size());
  SymbolicShape out(rank, cst(op, 1));
  for (auto &s : shapes)
    for (size_t k = 1; k <= s.size(); ++k) {
      FailureOr<AffineExpr> d =
          broadcastDim(op, out[rank - k], s[s.size() - k], k);
      if (failed(d))
        return failure();
      out[rank - k] = *d;
    }
  return out;
}

LogicalResult same(Operation *op, ArrayRef<SymbolicShape> in, Shapes &out) {
  out.push_back(in[0]);
  return success();
}

/// The shape of operand 0, computed along its dim `dim` (softmax, cumsum):
/// the dim must be one of its own.
LogicalResult sameAlongDim(Operation *op, ArrayRef<SymbolicShape> in,
                           Shapes &out) {
  if (failed(wrapDim(op, intAttr(op, "dim", 0), in[0].size())))
    return failure();
  out.push_back(in[0]);
  return success();
}

LogicalResult broadcastAll(Operation *op, ArrayRef<SymbolicShape> in,
                           Shapes &out) {
  FailureOr<SymbolicShape> s = broadcast(op, in);
  if (failed(s))
    return failure();
  out.push_back(*s);
  return success();
}

LogicalResult reduction(Operation *op, ArrayRef<SymbolicShape> in,
                        Shapes &out) {
  const SymbolicShape &x = in[0];
  bool keep = boolAttr(op, "keepdim", false);
  SmallVector<bool> reduced(x.size(), false);
  std::optional<ArrayRef<int64_t>> dims = arrayAttr(op, "dim");
  if (auto one = op->getAttrOfType<IntegerAttr>("dim")) { // argmax/argmin
    FailureOr<int64_t> d = wrapDim(op, one.getInt(), x.size());
    if (failed(d))
      return failure();
    if (!x.empty())
      reduced[*d] = true;
  } else if (!dims || dims->empty()) {
    reduced.assign(x.size(), true);
  } else {
    for (int64_t dim : *dims) {
      FailureOr<int64_t> d = wrapDim(op, dim, x.size());
      if (failed(d))
        return failure();
      if (!x.empty())
        reduced[*d] = true;
    }
  }
  SymbolicShape r;
  for (size_t d = 0; d < x.size(); ++d)
    if (!reduced[d])
      r.push_back(x[d]);
    else if (keep)
      r.push_back(cst(op, 1));
  out.push_back(r);
  return success();
}

/// Entry `k` of the int-array attribute `name` as capture gave it in
/// dynoc.sym_sizes (an expression of the dynamic input dims, which are the
/// first symbols here too), or null where the attribute's own entry holds.
AffineExpr symSize(Operation *op, StringRef name, size_t k) {
  auto dict = op->getAttrOfType<DictionaryAttr>(dynoc::attrs::kSymSizes);
  auto map = dict ? dict.getAs<AffineMapAttr>(name) : AffineMapAttr();
  if (!map || k >= map.getValue().getNumResults())
    return {};
  AffineExpr e = map.getValue().getResult(k);
  auto c = e.dyn_cast<AffineConstantExpr>();
  return c && c.getValue() == -1 ? AffineExpr() : e;
}

LogicalResult reshape(Operation *op, ArrayRef<SymbolicShape> in, Shapes &out) {
  StringRef attr = op->hasAttr("shape") ? "shape" : "size";
  ArrayRef<int64_t> size = *arrayAttr(op, attr);
  AffineExpr numel = product(op, in[0]);
  SymbolicShape r;
  int64_t known = 1, inferred = -1;
  AffineExpr symbolic = cst(op, 1); // the product of the captured sizes
  for (auto [k, s] : llvm::enumerate(size)) {
    if (AffineExpr e = s == -1 ? symSize(op, attr, k) : AffineExpr()) {
      symbolic = symbolic * e;
      r.push_back(e);
      continue;
    }
    if (s == -1) {
      if (inferred >= 0)
        return op->emitError() << "size has more than one -1";
      inferred = k;
      r.push_back({});
      continue;
    }
    if (s < 0)
      return op->emitError() << "size " << s << " is negative";
    known *= s;
    r.push_back(cst(op, s));
  }
  bool allConst = constOf(symbolic).has_value();
  std::optional<int64_t> n = numel ? constOf(numel) : std::nullopt;
  if (allConst && n &&
      (inferred < 0 ? *n != known : (known == 0 || *n % known != 0)))
    return op->emitError() << *n << " elements do not fit the shape ["
                           << llvm::make_range(size.begin(), size.end()) << "]";
  if (inferred >= 0 && numel && known != 0)
    r[inferred] = allConst ? numel.floorDiv(known)
                           : numel.floorDiv(symbolic * cst(op, known));
  out.push_back(r);
  return success();
}

/// expand_as / view_as: the shape of the other operand.
LogicalResult shapeOfOther(Operation *op, ArrayRef<SymbolicShape> in,
                           Shapes &out) {
  const SymbolicShape &x = in[0], &other = in[1];
  bool isView = op->getName().getStringRef() == "aten.view_as";
  if (!isView) {
    if (other.size() < x.size())
      return op->emitError()
             << "expands " << x.size() << " dims to " << other.size();
    size_t lead = other.size() - x.size();
    for (auto [k, from] : llvm::enumerate(x)) {
      auto a = from ? constOf(from) : std::nullopt;
      auto b = other[lead + k] ? constOf(other[lead + k]) : std::nullopt;
      if (a && b && *a != 1 && *a != *b)
        return op->emitError() << "dim " << lead + k << " of size " << *a
                               << " cannot expand to " << *b;
    }
  } else {
    AffineExpr a = product(op, x), b = product(op, other);
    auto na = a ? constOf(a) : std::nullopt, nb = b ? constOf(b) : std::nullopt;
    if (na && nb && *na != *nb)
      return op->emitError() << *na << " elements do not fit the shape of "
                             << *nb << " elements";
  }
  out.push_back(other);
  return success();
}

LogicalResult expand(Operation *op, ArrayRef<SymbolicShape> in, Shapes &out) {
  ArrayRef<int64_t> size = *arrayAttr(op, "size");
  const SymbolicShape &x = in[0];
  if (size.size() < x.size())
    return op->emitError() << "expands " << x.size() << " dims to "
                           << size.size();
  SymbolicShape r;
  size_t lead = size.size() - x.size();
  for (auto [k, s] : llvm::enumerate(size)) {
    AffineExpr from = k >= lead ? x[k - lead] : AffineExpr();
    if (AffineExpr e = s == -1 ? symSize(op, "size", k) : AffineExpr()) {
      r.push_back(e);
      continue;
    }
    if (s == -1) {
      if (k < lead)
        return op->emitError() << "-1 in a new leading dim " << k;
      r.push_back(from);
      continue;
    }
    if (from && constOf(from) && *constOf(from) != 1 && *constOf(from) != s)
      return op->emitError() << "dim " << k << " of size " << *constOf(from)
                             << " cannot expand to " << s;
    r.push_back(cst(op, s));
  }
  out.push_back(r);
  return success();
}

LogicalResult transpose(Operation *op, ArrayRef<SymbolicShape> in,
                        Shapes &out) {
  SymbolicShape r = in[0];
  StringRef n = op->getName().getStringRef();
  if (n == "aten.t") {
    if (r.size() > 2)
      return op->emitError() << "t() takes a tensor of at most 2 dims";
    std::reverse(r.begin(), r.end());
  } else if (n == "aten.transpose.int") {
    FailureOr<int64_t> a = wrapDim(op, intAttr(op, "dim0", 0), r.size());
    FailureOr<int64_t> b = wrapDim(op, intAttr(op, "dim1", 0), r.size());
    if (failed(a) || failed(b))
      return failure();
    if (!r.empty())
      std::swap(r[*a], r[*b]);
  } else {
    ArrayRef<int64_t> dims = *arrayAttr(op, "dims");
    if (dims.size() != r.size())
      return op->emitError() << "permutes " << dims.size()
                             << " dims of a tensor of rank " << r.size();
    for (auto [k, d] : llvm::enumerate(dims)) {
      FailureOr<int64_t> w = wrapDim(op, d, r.size());
      if (failed(w))
        return failure();
      r[k] = in[0][*w];
    }
  }
  out.push_back(r);
  return success();
}

LogicalResult unsqueeze(Operation *op, ArrayRef<SymbolicShape> in,
                        Shapes &out) {
  SymbolicShape r = in[0];
  FailureOr<int64_t> d = wrapDim(op, intAttr(op, "dim", 0), r.size() + 1);
  if (failed(d))
    return failure();
  r.insert(r.begin() + *d, cst(op, 1));
  out.push_back(r);
  return success();
}

LogicalResult squeezeDim(Operation *op, ArrayRef<SymbolicShape> in,
                         Shapes &out) {
  SymbolicShape r = in[0];
  FailureOr<int64_t> d = wrapDim(op, intAttr(op, "dim", 0), r.size());
  if (failed(d))
    return failure();
  if (!r.empty() && isConst(r[*d], 1))
    r.erase(r.begin() + *d);
  else if (!r.empty() && !constOf(r[*d]))
    return op->emitError() << "squeezes dim " << *d << ", which is dynamic ("
                           << dimText(r[*d])
                           << "): the result rank is not known";
  out.push_back(r);
  return success();
}

LogicalResult flatten(Operation *op, ArrayRef<SymbolicShape> in, Shapes &out) {
  const SymbolicShape &x = in[0];
  if (x.empty()) {
    out.push_back({cst(op, 1)});
    return success();
  }
  FailureOr<int64_t> a = wrapDim(op, intAttr(op, "start_dim", 0), x.size());
  FailureOr<int64_t> b = wrapDim(op, intAttr(op, "end_dim", -1), x.size());
  if (failed(a) || failed(b))
    return failure();
  if (*a > *b)
    return op->emitError() << "start_dim " << *a << " is after end_dim " << *b;
  SymbolicShape r(x.begin(), x.begin() + *a);
  r.push_back(product(op, ArrayRef<AffineExpr>(x).slice(*a, *b - *a + 1)));
  r.append(x.begin() + *b + 1, x.end());
  out.push_back(r);
  return success();
}

/// Two dims that must be equal (a contraction): an error if both are
/// different constants; the known one otherwise.
FailureOr<AffineExpr> matchDims(Operation *op, AffineExpr a, AffineExpr b,
                                StringRef what) {
  auto ca = constOf(a), cb = constOf(b);
  if (ca && cb && *ca != *cb)
    return op->emitError() << what << ": " << *ca << " vs " << *cb;
  return a ? a : b;
}

LogicalResult matmul(Operation *op, ArrayRef<SymbolicShape> in, Shapes &out) {
  StringRef n = op->getName().getStringRef();
  if (n == "aten.linear") {
    const SymbolicShape &x = in[0], &w = in[1];
    if (w.size() != 2 || x.empty())
      return op->emitError() << "linear takes a 2-d weight and an input of "
                                "rank >= 1";
    if (failed(matchDims(op, x.back(), w[1],
                         "the input's last dim and the weight's dim 1 differ")))
      return failure();
    SymbolicShape r(x.begin(), x.end() - 1);
    r.push_back(w[0]);
    out.push_back(r);
    return success();
  }
  bool addmm = n == "aten.addmm";
  const SymbolicShape &a = in[addmm ? 1 : 0], &b = in[addmm ? 2 : 1];
  size_t rank = n == "aten.bmm" ? 3 : 2;
  if (a.size() != rank || b.size() != rank)
    return op->emitError() << "takes " << rank << "-d operands";
  if (failed(matchDims(op, a[rank - 1], b[rank - 2],
                       "the contracted dims differ")))
    return failure();
  SymbolicShape r;
  if (rank == 3) {
    FailureOr<AffineExpr> batch =
        matchDims(op, a[0], b[0], "the batch dims differ");
    if (failed(batch))
      return failure();
    r.push_back(*batch);
  }
  r.push_back(a[rank - 2]);
  r.push_back(b[rank - 1]);
  if (addmm) {
    // The bias broadcasts to the product.
    SymbolicShape bias = in[0];
    if (failed(broadcast(op, {bias, r})))
      return failure();
  }
  out.push_back(r);
  return success();
}

/// (in + 2 * pad - dilation * (kernel - 1) - 1) / stride + 1, rounded down
/// (or up, with ceil_mode, where a window must start inside the input or
/// its left padding, as ATen's pooling_output_shape has it).
AffineExpr windowOut(Operation *op, AffineExpr in, int64_t kernel,
                     int64_t stride, int64_t pad, int64_t dilation, bool ceil) {
  if (!in)
    return {};
  AffineExpr span = in + (2 * pad - dilation * (kernel - 1) - 1);
  if (!ceil)
    return span.floorDiv(stride) + 1;
  std::optional<int64_t> n = constOf(in);
  if (!n)
    return {};
  int64_t s = *n + 2 * pad - dilation * (kernel - 1) - 1;
  int64_t o = (s + stride - 1) / stride + 1;
  if ((o - 1) * stride >= *n + pad)
    --o;
  return cst(op, o);
}

LogicalResult convolution(Operation *op, ArrayRef<SymbolicShape> in,
                          Shapes &out) {
  const SymbolicShape &x = in[0], &w = in[1];
  if (x.size() < 3 || w.size() != x.size())
    return op->emitError() << "takes an input and weight of the same rank "
                              ">= 3";
  size_t spatial = x.size() - 2;
  auto at = [&](StringRef name, size_t i, int64_t dflt) {
    std::optional<ArrayRef<int64_t>> v = arrayAttr(op, name);
    if (!v || v->empty())
      return dflt;
    return i < v->size() ? (*v)[i] : v->back();
  };
  int64_t groups = intAttr(op, "groups", 1);
  bool transposed = boolAttr(op, "transposed", false);
  SymbolicShape r{x[0]};
  if (!transposed)
    r.push_back(w[0]);
  else
    r.push_back(w[1] ? w[1] * groups : AffineExpr());
  for (size_t i = 0; i < spatial; ++i) {
    std::optional<int64_t> k = constOf(w[2 + i]);
    AffineExpr xi = x[2 + i];
    if (!k || !xi) {
      r.push_back({});
      continue;
    }
    int64_t s = at("stride", i, 1), p = at("padding", i, 0),
            d = at("dilation", i, 1);
    if (!transposed)
      r.push_back(windowOut(op, xi, *k, s, p, d, false));
    else
      r.push_back((xi - 1) * s +
                  (d * (*k - 1) + at("output_padding", i, 0) + 1 - 2 * p));
  }
  out.push_back(r);
  return success();
}

LogicalResult maxPool(Operation *op, ArrayRef<SymbolicShape> in, Shapes &out) {
  const SymbolicShape &x = in[0];
  ArrayRef<int64_t> kernel = *arrayAttr(op, "kernel_size");
  if (x.size() < 3 || kernel.empty())
    return op->emitError() << "takes a 3-d or 4-d input and a kernel size";
  auto at = [&](std::optional<ArrayRef<int64_t>> v, size_t i, int64_t dflt) {
    if (!v || v->empty())
      return dflt;
    return i < v->size() ? (*v)[i] : v->back();
  };
  SymbolicShape r(x.begin(), x.end() - 2);
  for (size_t i = 0; i < 2; ++i) {
    int64_t k = at(kernel, i, 1);
    r.push_back(windowOut(
        op, x[x.size() - 2 + i], k, at(arrayAttr(op, "stride"), i, k),
        at(arrayAttr(op, "padding"), i, 0), at(arrayAttr(op, "dilation"), i, 1),
        boolAttr(op, "ceil_mode", false)));
  }
  out.push_back(r);
  out.push_back(r);
  return success();
}

/// avg_pool2d: max pooling's window arithmetic (ceil_mode included), one
/// result.
LogicalResult avgPool(Operation *op, ArrayRef<SymbolicShape> in, Shapes &out) {
  if (failed(maxPool(op, in, out)))
    return failure();
  out.pop_back();
  return success();
}

LogicalResult layerNorm(Operation *op, ArrayRef<SymbolicShape> in,
                        Shapes &out) {
  const SymbolicShape &x = in[0];
  ArrayRef<int64_t> normalized = *arrayAttr(op, "normalized_shape");
  if (normalized.size() > x.size())
    return op->emitError() << "normalizes " << normalized.size()
                           << " dims of a tensor of rank " << x.size();
  size_t axis = x.size() - normalized.size();
  for (auto [k, n] : llvm::enumerate(normalized))
    if (auto c = constOf(x[axis + k]); c && *c != n)
      return op->emitError() << "normalized_shape dim " << k << " is " << n
                             << ", the input's is " << *c;
  SymbolicShape stats(x.begin(), x.begin() + axis);
  stats.append(normalized.size(), cst(op, 1));
  out.push_back(x);
  out.push_back(stats);
  out.push_back(stats);
  return success();
}

/// The normalized output has the input's shape; the saved statistics depend
/// on the mode and the kernel, and are left open.
/// native_batch_norm: the input's shape; in training mode also the batch's
/// mean and invstd, one per channel (dim 1). (Eval mode's are empty on the
/// CPU and left as the graph says.)
LogicalResult batchNorm(Operation *op, ArrayRef<SymbolicShape> in,
                        Shapes &out) {
  out.push_back(in[0]);
  if (!boolAttr(op, "training", false) || op->getNumResults() != 3)
    return success();
  if (in[0].size() < 2)
    return op->emitError() << "batch norm in training mode needs a channel "
                              "dim; the input has rank "
                           << in[0].size();
  out.push_back({in[0][1]});
  out.push_back({in[0][1]});
  return success();
}

LogicalResult split(Operation *op, ArrayRef<SymbolicShape> in, Shapes &out) {
  const SymbolicShape &x = in[0];
  FailureOr<int64_t> d = wrapDim(op, intAttr(op, "dim", 0), x.size());
  if (failed(d))
    return failure();
  int64_t size = intAttr(op, "split_size", 1);
  std::optional<int64_t> n = x.empty() ? std::nullopt : constOf(x[*d]);
  for (unsigned k = 0; k < op->getNumResults(); ++k) {
    SymbolicShape r = x;
    if (n)
      r[*d] = cst(op, std::max<int64_t>(0, std::min(size, *n - k * size)));
    else
      r[*d] = k + 1 < op->getNumResults() ? cst(op, size) : AffineExpr();
    out.push_back(r);
  }
  return success();
}

LogicalResult unbind(Operation *op, ArrayRef<SymbolicShape> in, Shapes &out) {
  SymbolicShape r = in[0];
  FailureOr<int64_t> d = wrapDim(op, intAttr(op, "dim", 0), r.size());
  if (failed(d))
    return failure();
  if (auto n = constOf(r[*d]); n && *n != (int64_t)op->getNumResults())
    return op->emitError() << "unbinds a dim of size " << *n << " into "
                           << op->getNumResults() << " results";
  r.erase(r.begin() + *d);
  out.append(op->getNumResults(), r);
  return success();
}

LogicalResult cat(Operation *op, ArrayRef<SymbolicShape> in, Shapes &out) {
  // ATen skips 1-d empty tensors in a cat (the legacy empty-list marker).
  SmallVector<SymbolicShape> parts;
  for (const SymbolicShape &s : in)
    if (!(s.size() == 1 && isConst(s[0], 0)))
      parts.push_back(s);
  if (parts.empty()) {
    out.push_back(in.empty() ? SymbolicShape{cst(op, 0)} : in[0]);
    return success();
  }
  SymbolicShape r = parts[0];
  FailureOr<int64_t> d = wrapDim(op, intAttr(op, "dim", 0), r.size());
  if (failed(d))
    return failure();
  for (size_t p = 1; p < parts.size(); ++p) {
    if (parts[p].size() != r.size())
      return op->emitError() << "concatenates tensors of rank " << r.size()
                             << " and " << parts[p].size();
    for (size_t k = 0; k < r.size(); ++k) {
      if ((int64_t)k == *d) {
        r[k] = r[k] && parts[p][k] ? r[k] + parts[p][k] : AffineExpr();
        continue;
      }
      FailureOr<AffineExpr> m =
          matchDims(op, r[k], parts[p][k],
                    "the operands differ in dim " + std::to_string(k));
      if (failed(m))
        return failure();
      r[k] = *m;
    }
  }
  out.push_back(r);
  return success();
}

LogicalResult stack(Operation *op, ArrayRef<SymbolicShape> in, Shapes &out) {
  SymbolicShape r = in[0];
  FailureOr<int64_t> d = wrapDim(op, intAttr(op, "dim", 0), r.size() + 1);
  if (failed(d))
    return failure();
  for (const SymbolicShape &s : in.drop_front()) {
    if (s.size() != r.size())
      return op->emitError()
             << "stacks tensors of rank " << r.size() << " and " << s.size();
    for (size_t k = 0; k < r.size(); ++k) {
      FailureOr<AffineExpr> m = matchDims(
          op, r[k], s[k], "the operands differ in dim " + std::to_string(k));
      if (failed(m))
        return failure();
      r[k] = *m;
    }
  }
  r.insert(r.begin() + *d, cst(op, in.size()));
  out.push_back(r);
  return success();
}

LogicalResult slice(Operation *op, ArrayRef<SymbolicShape> in, Shapes &out) {
  SymbolicShape r = in[0];
  FailureOr<int64_t> d = wrapDim(op, intAttr(op, "dim", 0), r.size());
  if (failed(d))
    return failure();
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  int64_t start = intAttr(op, "start", 0), end = intAttr(op, "end", kMax),
          step = intAttr(op, "step", 1);
  if (step <= 0)
    return op->emitError() << "step " << step << " is not positive";
  std::optional<int64_t> n = constOf(r[*d]);
  if (symSize(op, "start", 0) || symSize(op, "end", 0)) {
    // Bounds that depend on input dims (dynoc.sym_sizes): ATen clamps them
    // to the dim, which an affine expression cannot say.
    r[*d] = {};
  } else if (n) {
    auto clamp = [&](int64_t v) {
      if (v < 0)
        v = v < -*n ? 0 : v + *n;
      return std::min(v, *n);
    };
    int64_t a = clamp(start), b = clamp(end);
    r[*d] = cst(op, b > a ? (b - a + step - 1) / step : 0);
  } else if (start == 0 && end >= kMax / 2 && step == 1) {
    // The whole dim, however long.
  } else {
    r[*d] = {};
  }
  out.push_back(r);
  return success();
}

LogicalResult select(Operation *op, ArrayRef<SymbolicShape> in, Shapes &out) {
  SymbolicShape r = in[0];
  if (r.empty())
    return op->emitError() << "selects from a 0-d tensor";
  FailureOr<int64_t> d = wrapDim(op, intAttr(op, "dim", 0), r.size());
  if (failed(d))
    return failure();
  int64_t index = intAttr(op, "index", 0);
  if (auto n = constOf(r[*d]); n && (index < -*n || index >= *n))
    return op->emitError() << "index " << index << " is out of range for dim "
                           << *d << " of size " << *n;
  r.erase(r.begin() + *d);
  out.push_back(r);
  return success();
}

LogicalResult gather(Operation *op, ArrayRef<SymbolicShape> in, Shapes &out) {
  out.push_back(in[1]);
  return success();
}

LogicalResult embedding(Operation *op, ArrayRef<SymbolicShape> in,
                        Shapes &out) {
  if (in[0].size() != 2)
    return op->emitError() << "takes a 2-d weight";
  SymbolicShape r = in[1];
  r.push_back(in[0][1]);
  out.push_back(r);
  return success();
}

std::optional<double> scalarAttr(Operation *op, StringRef name) {
  Attribute a = op->getAttr(name);
  if (auto i = a.dyn_cast_or_null<IntegerAttr>())
    return i.getType().isInteger(1) ? (double)i.getValue().getZExtValue()
                                    : (double)i.getInt();
  if (auto f = a.dyn_cast_or_null<FloatAttr>())
    return f.getValueAsDouble();
  if (auto b = a.dyn_cast_or_null<BoolAttr>())
    return b.getValue() ? 1.0 : 0.0;
  return std::nullopt;
}

LogicalResult arange(Operation *op, ArrayRef<SymbolicShape>, Shapes &out) {
  std::optional<double> end = scalarAttr(op, "end");
  double start = scalarAttr(op, "start").value_or(0.0),
         step = scalarAttr(op, "step").value_or(1.0);
  if (!end || step == 0)
    return op->emitError() << "needs an end and a non-zero step";
  if (AffineExpr e = symSize(op, "end", 0)) {
    // An end that depends on input dims: ceil((end - start) / step).
    if (start != std::floor(start) || step != std::floor(step) || step < 0)
      return op->emitError() << "a symbolic end needs an integral start and "
                                "a positive integral step";
    out.push_back({(e - cst(op, (int64_t)start)).ceilDiv((int64_t)step)});
    return success();
  }
  double n = std::ceil((*end - start) / step);
  out.push_back({cst(op, n > 0 ? (int64_t)n : 0)});
  return success();
}

LogicalResult fill(Operation *op, ArrayRef<SymbolicShape>, Shapes &out) {
  SymbolicShape r;
  ArrayRef<int64_t> size = *arrayAttr(op, "size");
  for (auto [k, s] : llvm::enumerate(size)) {
    if (AffineExpr e = s == -1 ? symSize(op, "size", k) : AffineExpr()) {
      r.push_back(e); // an expression of the input dims
      continue;
    }
    if (s < 0)
      return op->emitError() << "size " << s << " is negative";
    r.push_back(cst(op, s));
  }
  out.push_back(r);
  return success();
}

LogicalResult attention(Operation *op, ArrayRef<SymbolicShape> in,
                        Shapes &out) {
  const SymbolicShape &q = in[0], &v = in[2];
  if (q.size() != 4 || in[1].size() != 4 || v.size() != 4)
    return op->emitError() << "takes 4-d query, key and value";
  // The logsumexp result (1) is empty unless the kernel keeps it for a
  // backward pass: left open.
  out.push_back({q[0], q[1], q[2], v[3]});
  return success();
}

/// Attention's backward: the gradients of query, key and value (operands
/// 1-3, after grad_out) have their shapes.
LogicalResult attentionBackward(Operation *op, ArrayRef<SymbolicShape> in,
                                Shapes &out) {
  out.append(in.begin() + 1, in.begin() + 4);
  return success();
}

const llvm::StringMap<Rule> &rules() {
  static const llvm::StringMap<Rule> table = [] {
    llvm::StringMap<Rule> t;
    for (const char *n : {"relu",
                          "sigmoid",
                          "tanh",
                          "neg",
                          "exp",
                          "gelu",
                          "silu",
                          "sqrt",
                          "rsqrt",
                          "abs",
                          "sin",
                          "cos",
                          "log",
                          "erf",
                          "logical_not",
                          "hardswish",
                          "bitwise_not",
                          "hardsigmoid",
                          "square",
                          "clone",
                          "contiguous",
                          "alias",
                          "detach",
                          "dropout",
                          "lift_fresh_copy",
                          "lift_fresh",
                          "_to_copy",
                          "to.dtype",
                          "add.Scalar",
                          "sub.Scalar",
                          "mul.Scalar",
                          "div.Scalar",
                          "eq.Scalar",
                          "ne.Scalar",
                          "lt.Scalar",
                          "le.Scalar",
                          "gt.Scalar",
                          "ge.Scalar",
                          "pow.Tensor_Scalar",
                          "ones_like",
                          "zeros_like",
                          "full_like",
                          "index_put",
                          "index_copy"})
      t[std::string("aten.") + n] = same;
    for (const char *n : {"_softmax", "_log_softmax", "_softmax_backward_data",
                          "_log_softmax_backward_data", "cumsum"})
      t[std::string("aten.") + n] = sameAlongDim;
    for (const char *n :
         {"add.Tensor", "sub.Tensor", "mul.Tensor", "div.Tensor", "maximum",
          "minimum", "eq.Tensor", "ne.Tensor", "lt.Tensor", "le.Tensor",
          "gt.Tensor", "ge.Tensor", "where.self", "masked_fill.Scalar",
          "pow.Tensor_Tensor"})
      t[std::string("aten.") + n] = broadcastAll;
    for (const char *n :
         {"sum", "sum.dim_IntList", "mean", "mean.dim", "amax", "amin",
          "argmax", "argmin", "var.correction", "var.dim", "std.correction",
          "std.dim", "logsumexp", "prod.dim_int", "any.dim", "any.dims",
          "all.dim", "all.dims"})
      t[std::string("aten.") + n] = reduction;
    for (const char *n : {"view", "_unsafe_view", "reshape"})
      t[std::string("aten.") + n] = reshape;
    for (const char *n : {"t", "transpose.int", "permute"})
      t[std::string("aten.") + n] = transpose;
    for (const char *n : {"mm", "addmm", "bmm", "linear"})
      t[std::string("aten.") + n] = matmul;
    for (const char *n :
         {"native_batch_norm", "_native_batch_norm_legit_no_training"})
      t[std::string("aten.") + n] = batchNorm;
    for (const char *n : {"full", "ones", "zeros"})
      t[std::string("aten.") + n] = fill;
    t["aten.expand"] = expand;
    t["aten.expand_as"] = shapeOfOther;
    t["aten.view_as"] = shapeOfOther;
    t["aten.unsqueeze"] = unsqueeze;
    t["aten.squeeze.dim"] = squeezeDim;
    t["aten.flatten.using_ints"] = flatten;
    t["aten.convolution"] = convolution;
    t["aten.max_pool2d_with_indices"] = maxPool;
    t["aten.avg_pool2d"] = avgPool;
    t["aten.native_layer_norm"] = layerNorm;
    t["aten.split.Tensor"] = split;
    t["aten.unbind.int"] = unbind;
    t["aten.cat"] = cat;
    t["aten.stack"] = stack;
    t["aten.slice.Tensor"] = slice;
    t["aten.select.int"] = select;
    t["aten.gather"] = gather;
    t["aten.embedding"] = embedding;
    t["aten.arange"] = arange;
    t["aten._scaled_dot_product_flash_attention_for_cpu"] = attention;
    t["aten._scaled_dot_product_flash_attention_for_cpu_backward"] =
        attentionBackward;
    return t;
  }();
  return table;
}

bool isFloat(Type t) { return t.isa<FloatType>(); }

Type elementOf(Value v) {
  return v.getType().cast<ShapedType>().getElementType();
}

} // namespace

bool dynoc::hasShapeFunction(Operation *op) {
  return rules().count(op->getName().getStringRef());
}

LogicalResult
dynoc::inferResultShapes(Operation *op, ArrayRef<SymbolicShape> operands,
                         SmallVectorImpl<SymbolicShape> &results) {
  auto it = rules().find(op->getName().getStringRef());
  if (it == rules().end())
    return success();
  if (failed(it->second(op, operands, results)))
    return failure();
  // A rule that gives fewer results leaves the rest open.
  for (unsigned k = results.size(); k < op->getNumResults(); ++k) {
    auto type = op->getResult(k).getType().cast<ShapedType>();
    results.push_back(SymbolicShape(type.getRank(), AffineExpr()));
  }
  return success();
}

Type dynoc::inferResultElementType(Operation *op, unsigned index) {
  StringRef n = op->getName().getStringRef();
  if (!n.consume_front("aten."))
    return {};
  MLIRContext *ctx = op->getContext();
  if (auto dtype = op->getAttrOfType<TypeAttr>("dtype"))
    return dtype.getValue();
  static const llvm::StringSet<> comparisons = {
      "eq.Tensor", "ne.Tensor", "lt.Tensor",  "le.Tensor", "gt.Tensor",
      "ge.Tensor", "eq.Scalar", "ne.Scalar",  "lt.Scalar", "le.Scalar",
      "gt.Scalar", "ge.Scalar", "logical_not"};
  if (comparisons.contains(n))
    return IntegerType::get(ctx, 1);
  if (n == "argmax" || n == "argmin" ||
      (n == "max_pool2d_with_indices" && index == 1))
    return IntegerType::get(ctx, 64);
  if (op->getNumOperands() == 0 || index != 0)
    return {};
  Type first = elementOf(op->getOperand(0));
  // Data movement keeps the dtype.
  static const llvm::StringSet<> keeps = {"relu",
                                          "neg",
                                          "bitwise_not",
                                          "abs",
                                          "clone",
                                          "contiguous",
                                          "alias",
                                          "detach",
                                          "lift_fresh_copy",
                                          "lift_fresh",
                                          "view",
                                          "_unsafe_view",
                                          "reshape",
                                          "expand",
                                          "expand_as",
                                          "view_as",
                                          "t",
                                          "transpose.int",
                                          "permute",
                                          "unsqueeze",
                                          "squeeze.dim",
                                          "flatten.using_ints",
                                          "slice.Tensor",
                                          "select.int",
                                          "cat",
                                          "stack",
                                          "split.Tensor",
                                          "unbind.int",
                                          "amax",
                                          "amin",
                                          "ones_like",
                                          "zeros_like",
                                          "full_like"};
  if (keeps.contains(n)) {
    // Every tensor operand of a cat/stack has one dtype after promotion.
    return llvm::all_of(op->getOperands(),
                        [&](Value v) { return elementOf(v) == first; })
               ? first
               : Type();
  }
  if (n == "gather" || n == "index.Tensor" || n == "embedding" ||
      n == "masked_fill.Scalar" || n == "index_put" || n == "index_copy")
    return first; // the table's or the source's dtype
  // Float math keeps a float operand's dtype.
  static const llvm::StringSet<> floatMath = {
      "sigmoid",      "tanh",
      "exp",          "gelu",
      "silu",         "sqrt",
      "rsqrt",        "sin",
      "cos",          "log",
      "erf",          "hardswish",
      "hardsigmoid",  "_softmax",
      "_log_softmax", "mean",
      "mean.dim",     "native_layer_norm",
      "dropout",      "pow.Tensor_Scalar",
      "add.Scalar",   "sub.Scalar",
      "mul.Scalar",   "div.Scalar",
      "convolution",  "mm",
      "bmm",          "addmm",
      "linear"};
  if (floatMath.contains(n) && isFloat(first))
    return first;
  // A float base to integer or same-type powers (ALiBi's slopes).
  if (n == "pow.Tensor_Tensor" && isFloat(first) &&
      (!isFloat(elementOf(op->getOperand(1))) ||
       elementOf(op->getOperand(1)) == first))
    return first;
  static const llvm::StringSet<> binary = {"add.Tensor", "sub.Tensor",
                                           "mul.Tensor", "maximum", "minimum"};
  if (binary.contains(n) && llvm::all_of(op->getOperands(), [&](Value v) {
        return elementOf(v) == first;
      }))
    return first;
  return {};
}
