//===- DataMovementDecompositions.cpp - gathers and splits -> core ops ----===//
//
// Data movement ops the backends build through others: index_select of the
// rows of a matrix is an embedding lookup (XGLM's and M2M100's sinusoidal
// position tables), and split_with_sizes is one slice per piece (GPTBigCode's
// fused query/key/value projection). A copy of a value over one of the same
// type is that value (the functional form of `t.copy_(src)`, which capture
// records where a collective's result is copied back into its tensor).
// index_copy along a dim is index_put with that dim indexed; index_select
// and flip are index.Tensor along a dim, roll a cat of two slices per dim,
// repeat a view, expand and reshape, pixel_shuffle a view, permute and
// reshape, diagonal an as_strided of the dense layout, masked_scatter a
// gather at the mask's running count.
//
//===----------------------------------------------------------------------===//
#include "dynoc/IR/AtenDialect.h"
#include "dynoc/Passes/Passes.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/PatternMatch.h"

#include <algorithm>

using namespace mlir;
using namespace dynoc::aten;

namespace {
/// index_select(m, 0, idx) of a matrix m and a vector idx: embedding(m, idx).
struct IndexSelectRows : OpRewritePattern<AtenIndexSelectOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AtenIndexSelectOp op,
                                PatternRewriter &rewriter) const override {
    auto self = op.getSelf().getType().cast<RankedTensorType>();
    auto index = op.getIndex().getType().cast<RankedTensorType>();
    int64_t dim = op.getDim();
    if (self.getRank() != 2 || (dim != 0 && dim != -2) || index.getRank() != 1)
      return rewriter.notifyMatchFailure(op, "not rows of a matrix");
    rewriter.replaceOpWithNewOp<AtenEmbeddingOp>(op, op.getType(), op.getSelf(),
                                                 op.getIndex(), IntegerAttr(),
                                                 BoolAttr(), BoolAttr());
    return success();
  }
};

/// split_with_sizes(x, sizes, dim): slice(x, dim, start, start + size) each.
struct SplitWithSizes : OpRewritePattern<AtenSplitWithSizesOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AtenSplitWithSizesOp op,
                                PatternRewriter &rewriter) const override {
    auto self = op.getSelf().getType().cast<RankedTensorType>();
    int64_t dim = op.getDim().value_or(0);
    if (dim < 0)
      dim += self.getRank();
    if (dim < 0 || dim >= self.getRank())
      return rewriter.notifyMatchFailure(op, "dim out of range");
    ArrayRef<int64_t> sizes = op.getSplitSizes();
    if (sizes.size() != op.getNumResults())
      return rewriter.notifyMatchFailure(op, "one result per size expected");
    if (llvm::any_of(sizes, [](int64_t s) { return s < 0; }))
      return rewriter.notifyMatchFailure(op, "a negative size");
    SmallVector<Value> pieces;
    int64_t start = 0;
    for (auto [size, result] : llvm::zip(sizes, op.getResults())) {
      pieces.push_back(rewriter.create<AtenSliceTensorOp>(
          op.getLoc(), result.getType(), op.getSelf(),
          rewriter.getI64IntegerAttr(dim), rewriter.getI64IntegerAttr(start),
          rewriter.getI64IntegerAttr(start + size),
          rewriter.getI64IntegerAttr(1)));
      start += size;
    }
    rewriter.replaceOp(op, pieces);
    return success();
  }
};
/// copy(self, src) of a src with self's type: src (values are immutable).
struct CopyOfSameType : OpRewritePattern<AtenCopyOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AtenCopyOp op,
                                PatternRewriter &rewriter) const override {
    if (op.getSrc().getType() != op.getType())
      return rewriter.notifyMatchFailure(op, "a conversion or a broadcast");
    rewriter.replaceOp(op, op.getSrc());
    return success();
  }
};
/// index_copy(self, dim, index, source) of a vector index: index_put(self,
/// [None] * dim + [index], source) (transformers' static KV cache writes
/// `keys.index_copy_(2, cache_position, k)`).
struct IndexCopyAsIndexPut : OpRewritePattern<AtenIndexCopyOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AtenIndexCopyOp op,
                                PatternRewriter &rewriter) const override {
    auto self = op.getSelf().getType().cast<RankedTensorType>();
    auto index = op.getIndex().getType().cast<RankedTensorType>();
    int64_t dim = op.getDim();
    if (dim < 0)
      dim += self.getRank();
    if (dim < 0 || dim >= self.getRank())
      return rewriter.notifyMatchFailure(op, "dim out of range");
    if (index.getRank() != 1)
      return rewriter.notifyMatchFailure(op, "not a vector index");
    SmallVector<int64_t> none;
    for (int64_t d = 0; d < dim; ++d)
      none.push_back(d);
    rewriter.replaceOpWithNewOp<AtenIndexPutOp>(
        op, op.getType(), op.getSelf(), ValueRange{op.getIndex()},
        op.getSource(),
        none.empty() ? DenseI64ArrayAttr() : rewriter.getDenseI64ArrayAttr(none),
        rewriter.getBoolAttr(false));
    return success();
  }
};
/// The positions start, start + step, ... below end as an int64 vector
/// (arange.start_step), for index_put.
Value positions(PatternRewriter &rewriter, Location loc, int64_t start,
                int64_t end, int64_t step) {
  int64_t n = end > start ? (end - start + step - 1) / step : 0;
  auto type = RankedTensorType::get({n}, rewriter.getIntegerType(64));
  return rewriter.create<AtenArangeStartStepOp>(
      loc, type, rewriter.getI64IntegerAttr(start),
      rewriter.getI64IntegerAttr(end), rewriter.getI64IntegerAttr(step),
      TypeAttr(), StringAttr(), StringAttr(), BoolAttr());
}

DenseI64ArrayAttr noneBefore(PatternRewriter &rewriter, int64_t dim) {
  SmallVector<int64_t> none;
  for (int64_t d = 0; d < dim; ++d)
    none.push_back(d);
  return none.empty() ? DenseI64ArrayAttr() : rewriter.getDenseI64ArrayAttr(none);
}

/// slice_scatter(self, src, dim, start, end, step): index_put(self, [None] *
/// dim + [positions], src), the functional form of an in-place update of a
/// slice (`shifted[..., 1:] = ids[..., :-1]`, capture/recorder.py). Static
/// sizes along dim only (the positions are a constant).
struct SliceScatterAsIndexPut : OpRewritePattern<AtenSliceScatterOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AtenSliceScatterOp op,
                                PatternRewriter &rewriter) const override {
    auto self = op.getSelf().getType().cast<RankedTensorType>();
    int64_t dim = op.getDim().value_or(0);
    if (dim < 0)
      dim += self.getRank();
    if (dim < 0 || dim >= self.getRank() || self.isDynamicDim(dim))
      return rewriter.notifyMatchFailure(op, "dim out of range or dynamic");
    int64_t size = self.getDimSize(dim), step = op.getStep().value_or(1);
    int64_t start = op.getStart().value_or(0);
    int64_t end = op.getEnd().value_or(size);
    if (step < 1)
      return rewriter.notifyMatchFailure(op, "a step below 1");
    // ATen's clamping of slice bounds.
    if (start < 0)
      start += size;
    if (end < 0)
      end += size;
    start = std::clamp<int64_t>(start, 0, size);
    end = std::clamp<int64_t>(end, start, size);
    Value at = positions(rewriter, op.getLoc(), start, end, step);
    rewriter.replaceOpWithNewOp<AtenIndexPutOp>(
        op, op.getType(), op.getSelf(), ValueRange{at}, op.getSrc(),
        noneBefore(rewriter, dim), rewriter.getBoolAttr(false));
    return success();
  }
};

/// select_scatter(self, src, dim, index): index_put(self, [None] * dim +
/// [[index]], src.unsqueeze(dim)) (`shifted[..., 0] = start`).
struct SelectScatterAsIndexPut : OpRewritePattern<AtenSelectScatterOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AtenSelectScatterOp op,
                                PatternRewriter &rewriter) const override {
    auto self = op.getSelf().getType().cast<RankedTensorType>();
    auto src = op.getSrc().getType().cast<RankedTensorType>();
    int64_t dim = op.getDim();
    if (dim < 0)
      dim += self.getRank();
    if (dim < 0 || dim >= self.getRank() || self.isDynamicDim(dim))
      return rewriter.notifyMatchFailure(op, "dim out of range or dynamic");
    int64_t size = self.getDimSize(dim), index = op.getIndex();
    if (index < 0)
      index += size;
    if (index < 0 || index >= size)
      return rewriter.notifyMatchFailure(op, "index out of range");
    SmallVector<int64_t> shape(src.getShape());
    shape.insert(shape.begin() + dim, 1);
    Value values = rewriter.create<AtenUnsqueezeOp>(
        op.getLoc(), RankedTensorType::get(shape, src.getElementType()),
        op.getSrc(), rewriter.getI64IntegerAttr(dim));
    Value at = positions(rewriter, op.getLoc(), index, index + 1, 1);
    rewriter.replaceOpWithNewOp<AtenIndexPutOp>(
        op, op.getType(), op.getSelf(), ValueRange{at}, values,
        noneBefore(rewriter, dim), rewriter.getBoolAttr(false));
    return success();
  }
};

/// fill.Scalar(self, v): full_like(self, v); fill.Tensor(self, v) of a 0-d
/// v of self's dtype: v expanded to self's shape.
struct FillScalarAsFullLike : OpRewritePattern<AtenFillScalarOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AtenFillScalarOp op,
                                PatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<AtenFullLikeOp>(
        op, op.getType(), op.getSelf(), op.getValueAttr(), TypeAttr(),
        StringAttr(), StringAttr(), BoolAttr(), StringAttr());
    return success();
  }
};
struct FillTensorAsExpand : OpRewritePattern<AtenFillTensorOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AtenFillTensorOp op,
                                PatternRewriter &rewriter) const override {
    auto self = op.getSelf().getType().cast<RankedTensorType>();
    auto value = op.getValue().getType().cast<RankedTensorType>();
    if (value.getRank() != 0 ||
        value.getElementType() != self.getElementType() ||
        !self.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "not a 0-d value of self's dtype");
    rewriter.replaceOpWithNewOp<AtenExpandOp>(
        op, op.getType(), op.getValue(),
        rewriter.getDenseI64ArrayAttr(self.getShape()), BoolAttr());
    return success();
  }
};

/// `x` with the positions `index` (an int64 vector) picked along `dim`:
/// index.Tensor with [None] * dim + [index].
Value pickAlong(PatternRewriter &rewriter, Location loc, Value x, int64_t dim,
                Value index) {
  auto xt = x.getType().cast<RankedTensorType>();
  SmallVector<int64_t> shape(xt.getShape());
  shape[dim] = index.getType().cast<RankedTensorType>().getDimSize(0);
  return rewriter.create<AtenIndexTensorOp>(
      loc, RankedTensorType::get(shape, xt.getElementType()), x,
      ValueRange{index}, noneBefore(rewriter, dim));
}

/// index_select(x, dim, idx) of a vector idx (beyond IndexSelectRows'
/// matrices): index.Tensor with [None] * dim + [idx].
struct IndexSelectAsIndex : OpRewritePattern<AtenIndexSelectOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AtenIndexSelectOp op,
                                PatternRewriter &rewriter) const override {
    auto self = op.getSelf().getType().cast<RankedTensorType>();
    auto index = op.getIndex().getType().cast<RankedTensorType>();
    int64_t dim = op.getDim();
    int64_t rank = std::max<int64_t>(self.getRank(), 1); // 0-d: as [1]
    if (dim < 0)
      dim += rank;
    if (dim < 0 || dim >= rank || index.getRank() > 1)
      return rewriter.notifyMatchFailure(op, "not a vector index of a dim");
    Location loc = op.getLoc();
    auto asVector = [&](Value v) -> Value {
      auto t = v.getType().cast<RankedTensorType>();
      if (t.getRank() != 0)
        return v;
      return rewriter.create<AtenViewOp>(
          loc, RankedTensorType::get({1}, t.getElementType()), v,
          rewriter.getDenseI64ArrayAttr({1}));
    };
    // One position of a 0-d index keeps the dim; a 0-d self reads its one
    // element (index.Tensor checks the position at run time).
    Value picked = pickAlong(rewriter, loc, asVector(op.getSelf()), dim,
                             asVector(op.getIndex()));
    if (picked.getType() != op.getType())
      picked = rewriter.create<AtenViewOp>(
          loc, op.getType(), picked,
          rewriter.getDenseI64ArrayAttr(
              op.getType().cast<RankedTensorType>().getShape()));
    rewriter.replaceOp(op, picked);
    return success();
  }
};

/// flip(x, dims): each dim read backwards (positions n-1, ..., 0). Static
/// sizes along the flipped dims.
struct FlipAsIndex : OpRewritePattern<AtenFlipOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AtenFlipOp op,
                                PatternRewriter &rewriter) const override {
    auto self = op.getSelf().getType().cast<RankedTensorType>();
    Value x = op.getSelf();
    for (int64_t d : op.getDims()) {
      if (d < 0)
        d += self.getRank();
      if (d < 0 || d >= self.getRank() || self.isDynamicDim(d))
        return rewriter.notifyMatchFailure(op, "a dynamic or invalid dim");
      int64_t n = self.getDimSize(d);
      auto type = RankedTensorType::get({n}, rewriter.getIntegerType(64));
      Value backwards = rewriter.create<AtenArangeStartStepOp>(
          op.getLoc(), type, rewriter.getI64IntegerAttr(n - 1),
          rewriter.getI64IntegerAttr(-1), rewriter.getI64IntegerAttr(-1),
          TypeAttr(), StringAttr(), StringAttr(), BoolAttr());
      x = pickAlong(rewriter, op.getLoc(), x, d, backwards);
    }
    rewriter.replaceOp(op, x);
    return success();
  }
};

/// roll(x, shifts, dims): per dim, the last `shift` positions then the rest
/// (cat of two slices). Without dims: the flattened tensor rolled, viewed
/// back. Static shapes.
struct RollAsSlices : OpRewritePattern<AtenRollOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AtenRollOp op,
                                PatternRewriter &rewriter) const override {
    auto self = op.getSelf().getType().cast<RankedTensorType>();
    if (!self.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "dynamic shape");
    Location loc = op.getLoc();
    Value x = op.getSelf();
    SmallVector<int64_t> dims;
    if (op.getDims())
      dims.assign(op.getDims()->begin(), op.getDims()->end());
    ArrayRef<int64_t> shifts = op.getShifts();
    bool flat = dims.empty();
    if (flat) {
      if (shifts.size() != 1)
        return rewriter.notifyMatchFailure(op, "one shift without dims");
      auto t = RankedTensorType::get({self.getNumElements()},
                                     self.getElementType());
      x = rewriter.create<AtenViewOp>(loc, t, x,
                                      rewriter.getDenseI64ArrayAttr(t.getShape()));
      dims = {0};
    }
    if (dims.size() != shifts.size())
      return rewriter.notifyMatchFailure(op, "shifts and dims differ in length");
    for (auto [d, shift] : llvm::zip(dims, shifts)) {
      auto t = x.getType().cast<RankedTensorType>();
      if (d < 0)
        d += t.getRank();
      if (d < 0 || d >= t.getRank())
        return rewriter.notifyMatchFailure(op, "dim out of range");
      int64_t n = t.getDimSize(d);
      if (n == 0)
        continue;
      int64_t s = ((shift % n) + n) % n;
      if (s == 0)
        continue;
      auto piece = [&](int64_t start, int64_t end) -> Value {
        SmallVector<int64_t> shape(t.getShape());
        shape[d] = end - start;
        return rewriter.create<AtenSliceTensorOp>(
            loc, RankedTensorType::get(shape, t.getElementType()), x,
            rewriter.getI64IntegerAttr(d), rewriter.getI64IntegerAttr(start),
            rewriter.getI64IntegerAttr(end), rewriter.getI64IntegerAttr(1));
      };
      x = rewriter.create<AtenCatOp>(loc, t, ValueRange{piece(n - s, n),
                                                        piece(0, n - s)},
                                     rewriter.getI64IntegerAttr(d));
    }
    if (flat)
      x = rewriter.create<AtenViewOp>(loc, self, x,
                                      rewriter.getDenseI64ArrayAttr(self.getShape()));
    rewriter.replaceOp(op, x);
    return success();
  }
};

/// repeat(x, repeats): x viewed as [1, s0, 1, s1, ...] (missing leading dims
/// as 1), expanded to [r0, s0, r1, s1, ...], viewed as [r0 * s0, ...].
/// Static shapes.
struct RepeatAsExpand : OpRewritePattern<AtenRepeatOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AtenRepeatOp op,
                                PatternRewriter &rewriter) const override {
    auto self = op.getSelf().getType().cast<RankedTensorType>();
    ArrayRef<int64_t> repeats = op.getRepeats();
    if (!self.hasStaticShape() || repeats.size() < size_t(self.getRank()))
      return rewriter.notifyMatchFailure(op, "dynamic, or fewer repeats than dims");
    SmallVector<int64_t> sizes(repeats.size() - self.getRank(), 1);
    sizes.append(self.getShape().begin(), self.getShape().end());
    SmallVector<int64_t> interleaved, expanded, result;
    for (auto [r, s] : llvm::zip(repeats, sizes)) {
      interleaved.append({1, s});
      expanded.append({r, s});
      result.push_back(r * s);
    }
    Location loc = op.getLoc();
    Type e = self.getElementType();
    auto typed = [&](ArrayRef<int64_t> shape) {
      return RankedTensorType::get(shape, e);
    };
    Value x = rewriter.create<AtenViewOp>(loc, typed(interleaved), op.getSelf(),
                                          rewriter.getDenseI64ArrayAttr(interleaved));
    x = rewriter.create<AtenExpandOp>(loc, typed(expanded), x,
                                      rewriter.getDenseI64ArrayAttr(expanded),
                                      BoolAttr());
    x = rewriter.create<AtenReshapeOp>(loc, typed(result), x,
                                       rewriter.getDenseI64ArrayAttr(result));
    rewriter.replaceOp(op, x);
    return success();
  }
};

/// pixel_shuffle(x, r) of x [*, C*r*r, H, W]: viewed as [*, C, r, r, H, W],
/// permuted to [*, C, H, r, W, r], reshaped to [*, C, H*r, W*r]. Static
/// shapes.
struct PixelShuffleAsPermute : OpRewritePattern<AtenPixelShuffleOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AtenPixelShuffleOp op,
                                PatternRewriter &rewriter) const override {
    auto self = op.getSelf().getType().cast<RankedTensorType>();
    int64_t r = op.getUpscaleFactor(), rank = self.getRank();
    if (!self.hasStaticShape() || rank < 3 || r <= 0 ||
        self.getDimSize(rank - 3) % (r * r) != 0)
      return rewriter.notifyMatchFailure(op, "dynamic, or not [*, C*r*r, H, W]");
    ArrayRef<int64_t> shape = self.getShape();
    int64_t b = rank - 3, c = shape[b] / (r * r), h = shape[b + 1],
            w = shape[b + 2];
    SmallVector<int64_t> split(shape.take_front(b)), perm, permuted(split);
    split.append({c, r, r, h, w});
    for (int64_t d = 0; d < b; ++d)
      perm.push_back(d);
    perm.append({b, b + 3, b + 1, b + 4, b + 2});
    permuted.append({c, h, r, w, r});
    Location loc = op.getLoc();
    Type e = self.getElementType();
    Value x = rewriter.create<AtenViewOp>(loc, RankedTensorType::get(split, e),
                                          op.getSelf(),
                                          rewriter.getDenseI64ArrayAttr(split));
    x = rewriter.create<AtenPermuteOp>(loc, RankedTensorType::get(permuted, e),
                                       x, rewriter.getDenseI64ArrayAttr(perm));
    auto result = op.getType().cast<RankedTensorType>();
    x = rewriter.create<AtenReshapeOp>(
        loc, result, x, rewriter.getDenseI64ArrayAttr(result.getShape()));
    rewriter.replaceOp(op, x);
    return success();
  }
};
/// diagonal(x, offset, dim1, dim2) of a static shape: as_strided over x's
/// dense layout, the diagonal's stride the sum of dim1's and dim2's, after
/// the other dims (ATen's order).
struct DiagonalAsStrided : OpRewritePattern<AtenDiagonalOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AtenDiagonalOp op,
                                PatternRewriter &rewriter) const override {
    auto type = op.getSelf().getType().cast<RankedTensorType>();
    if (!type.hasStaticShape() || type.getRank() < 2)
      return rewriter.notifyMatchFailure(op, "not a static shape of rank 2+");
    const int64_t rank = type.getRank();
    auto wrap = [&](int64_t d) { return d < 0 ? d + rank : d; };
    int64_t d1 = wrap(op.getDim1().value_or(0)),
            d2 = wrap(op.getDim2().value_or(1)), offset = op.getOffset().value_or(0);
    if (d1 == d2 || d1 < 0 || d2 < 0 || d1 >= rank || d2 >= rank)
      return rewriter.notifyMatchFailure(op, "dims out of range or equal");
    ArrayRef<int64_t> shape = type.getShape();
    SmallVector<int64_t> dense(rank, 1);
    for (int64_t d = rank - 2; d >= 0; --d)
      dense[d] = dense[d + 1] * shape[d + 1];
    int64_t length = std::max<int64_t>(
        0, offset >= 0 ? std::min(shape[d1], shape[d2] - offset)
                       : std::min(shape[d1] + offset, shape[d2]));
    int64_t start = length == 0 ? 0
                    : offset >= 0 ? offset * dense[d2]
                                  : -offset * dense[d1];
    SmallVector<int64_t> sizes, strides;
    for (int64_t d = 0; d < rank; ++d)
      if (d != d1 && d != d2)
        sizes.push_back(shape[d]), strides.push_back(dense[d]);
    sizes.push_back(length);
    strides.push_back(dense[d1] + dense[d2]);
    if (op.getType().cast<RankedTensorType>().getShape() != ArrayRef(sizes))
      return rewriter.notifyMatchFailure(op, "result shape differs");
    rewriter.replaceOpWithNewOp<AtenAsStridedOp>(
        op, op.getType(), op.getSelf(), rewriter.getDenseI64ArrayAttr(sizes),
        rewriter.getDenseI64ArrayAttr(strides),
        rewriter.getI64IntegerAttr(start));
    return success();
  }
};
/// masked_scatter(self, mask, source) of static shapes: the k-th true
/// position of the mask (broadcast to self) takes source's k-th element, in
/// row-major order: where(mask, source.flatten()[cumsum(mask) - 1], self)
/// (a false before the first true picks position -1, the last: in bounds,
/// not taken). A source with fewer elements than the mask has trues fails
/// index.Tensor's bounds check at run time (eager raises too).
struct MaskedScatterAsIndex : OpRewritePattern<AtenMaskedScatterOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AtenMaskedScatterOp op,
                                PatternRewriter &rewriter) const override {
    auto self = op.getSelf().getType().cast<RankedTensorType>();
    auto mask = op.getMask().getType().cast<RankedTensorType>();
    auto source = op.getSource().getType().cast<RankedTensorType>();
    if (!self.hasStaticShape() || !mask.hasStaticShape() ||
        !source.hasStaticShape() || source.getNumElements() == 0 ||
        mask.getRank() > self.getRank())
      return rewriter.notifyMatchFailure(op, "dynamic, empty or wider shapes");
    Location loc = op.getLoc();
    Type i1 = rewriter.getI1Type(), i64 = rewriter.getI64Type();
    const int64_t n = self.getNumElements();
    Value full = op.getMask();
    if (mask.getShape() != self.getShape())
      full = rewriter.create<AtenExpandOp>(
          loc, RankedTensorType::get(self.getShape(), i1), full,
          rewriter.getDenseI64ArrayAttr(self.getShape()), BoolAttr());
    auto flat = [&](Value v, int64_t count, Type element) -> Value {
      return rewriter.create<AtenReshapeOp>(
          loc, RankedTensorType::get({count}, element), v,
          rewriter.getDenseI64ArrayAttr({count}));
    };
    auto vector = RankedTensorType::get({n}, i64);
    Value position = rewriter.create<AtenCumsumOp>(
        loc, vector, flat(full, n, i1), rewriter.getI64IntegerAttr(0),
        TypeAttr::get(i64));
    position = rewriter.create<AtenSubScalarOp>(
        loc, vector, position, rewriter.getI64IntegerAttr(1), Attribute());
    Value picked = pickAlong(
        rewriter, loc,
        flat(op.getSource(), source.getNumElements(), self.getElementType()),
        0, position);
    picked = rewriter.create<AtenReshapeOp>(
        loc, self, picked, rewriter.getDenseI64ArrayAttr(self.getShape()));
    rewriter.replaceOpWithNewOp<AtenWhereSelfOp>(op, op.getType(), full, picked,
                                                 op.getSelf());
    return success();
  }
};
} // namespace

void dynoc::populateDataMovementDecompositions(RewritePatternSet &patterns) {
  patterns.add<CopyOfSameType, FillScalarAsFullLike, FillTensorAsExpand,
               IndexCopyAsIndexPut, SelectScatterAsIndexPut,
               SliceScatterAsIndexPut, SplitWithSizes, FlipAsIndex,
               RollAsSlices, RepeatAsExpand, PixelShuffleAsPermute,
               DiagonalAsStrided, MaskedScatterAsIndex>(
      patterns.getContext());
  // Matrix rows as an embedding lookup before the general form.
  patterns.add<IndexSelectRows>(patterns.getContext(), /*benefit=*/2);
  patterns.add<IndexSelectAsIndex>(patterns.getContext());
}
