//===- StatisticsDecompositions.cpp - variance and training batch norm ----===//
//
// Ops that compute per-channel statistics of a batch, as the reductions and
// elementwise ops both backends emit: var.correction, native_batch_norm in
// training mode (its batch mean and inverse standard deviation) and
// native_batch_norm_backward (docs/training.md), and native_group_norm; and
// max/min of a whole tensor as amax/amin, max.dim/min.dim as amax/amin and
// argmax/argmin, any/all as amax/amin of `x != 0`.
// Static shapes: the element counts they divide by are constants of the
// graph.
//
//===----------------------------------------------------------------------===//
#include "dynoc/IR/AtenDialect.h"
#include "dynoc/Passes/Passes.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/PatternMatch.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace dynoc::aten;

namespace {
/// Emits the ops of one rewrite at one location.
struct Builder {
  PatternRewriter &rewriter;
  Location loc;

  Attribute f64(double v) { return rewriter.getF64FloatAttr(v); }
  Value mul(Value a, Value b, Type t) {
    return rewriter.create<AtenMulTensorOp>(loc, t, a, b);
  }
  Value sub(Value a, Value b, Type t) {
    return rewriter.create<AtenSubTensorOp>(loc, t, a, b, Attribute());
  }
  Value scale(Value x, double c) {
    return rewriter.create<AtenMulScalarOp>(loc, x.getType(), x, f64(c));
  }
  /// sum or mean of x over `dims` (sorted) with keepdim: one reduction per
  /// run of adjacent dims, the last run first (the emitters reduce adjacent
  /// dims only; the mean of equal-sized groups' means is the mean).
  Value reduce(Value x, ArrayRef<int64_t> dims, bool isMean) {
    for (size_t end = dims.size(); end > 0;) {
      size_t begin = end - 1;
      while (begin > 0 && dims[begin - 1] + 1 == dims[begin])
        --begin;
      auto type = x.getType().cast<RankedTensorType>();
      SmallVector<int64_t> shape(type.getShape());
      for (size_t i = begin; i < end; ++i)
        shape[dims[i]] = 1;
      auto t = RankedTensorType::get(shape, type.getElementType());
      auto run = rewriter.getDenseI64ArrayAttr(dims.slice(begin, end - begin));
      if (isMean)
        x = rewriter.create<AtenMeanDimOp>(
            loc, t, x, run, rewriter.getBoolAttr(true), TypeAttr());
      else
        x = rewriter.create<AtenSumDimIntListOp>(
            loc, t, x, run, rewriter.getBoolAttr(true), TypeAttr());
      end = begin;
    }
    return x;
  }
  Value sum(Value x, ArrayRef<int64_t> dims) { return reduce(x, dims, false); }
  Value mean(Value x, ArrayRef<int64_t> dims) { return reduce(x, dims, true); }
  /// y * w + b with per-channel w and b (either may be absent) viewed as
  /// `chan`: a normalization's affine step.
  Value affine(Value y, Value w, Value bias, RankedTensorType chan) {
    Type t = y.getType();
    if (w)
      y = mul(y, view(w, chan), t);
    if (bias)
      y = rewriter.create<AtenAddTensorOp>(loc, t, y, view(bias, chan),
                                           Attribute());
    return y;
  }
  Value view(Value x, RankedTensorType t) {
    return rewriter.create<AtenViewOp>(
        loc, t, x, rewriter.getDenseI64ArrayAttr(t.getShape()));
  }
};

/// The shape of `type` with every dim but `keep` as 1.
RankedTensorType channelShape(RankedTensorType type, int64_t keep) {
  SmallVector<int64_t> shape(type.getRank(), 1);
  shape[keep] = type.getDimSize(keep);
  return RankedTensorType::get(shape, type.getElementType());
}

/// The dims a batch norm reduces over: all but the channels (dim 1).
SmallVector<int64_t> batchDims(RankedTensorType type) {
  SmallVector<int64_t> dims;
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (d != 1)
      dims.push_back(d);
  return dims;
}

/// var(x, dims, correction) = sum((x - mean(x))^2, dims) / (N - correction),
/// N the element count over `dims` (all dims when none are given).
struct VarCorrection : OpRewritePattern<AtenVarCorrectionOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AtenVarCorrectionOp op,
                                PatternRewriter &rewriter) const override {
    auto type = op.getSelf().getType().cast<RankedTensorType>();
    auto resultType = op.getType().cast<RankedTensorType>();
    if (!type.hasStaticShape() || !type.getElementType().isa<FloatType>())
      return rewriter.notifyMatchFailure(op, "dynamic shape or integer input");
    SmallVector<int64_t> dims;
    if (auto d = op.getDim())
      for (int64_t v : *d) {
        // dynoc-infer-shapes names the error; this pass may run alone.
        if (v < -type.getRank() || v >= type.getRank())
          return rewriter.notifyMatchFailure(op, "dim out of range");
        dims.push_back(v < 0 ? v + type.getRank() : v);
      }
    if (dims.empty())
      for (int64_t d = 0; d < type.getRank(); ++d)
        dims.push_back(d);
    double correction = 1.0;
    if (auto c = op.getCorrectionAttr()) {
      if (auto i = c.dyn_cast<IntegerAttr>())
        correction = double(i.getInt());
      else if (auto f = c.dyn_cast<FloatAttr>())
        correction = f.getValueAsDouble();
      else
        return rewriter.notifyMatchFailure(op, "boolean correction");
    }
    int64_t n = 1;
    for (int64_t d : dims)
      n *= type.getDimSize(d);
    llvm::sort(dims);
    Builder b{rewriter, op.getLoc()};
    Value centered = b.sub(op.getSelf(), b.mean(op.getSelf(), dims), type);
    Value squares = b.sum(b.mul(centered, centered, type), dims);
    if (!op.getKeepdim().value_or(false))
      squares = b.view(squares, resultType);
    // ATen divides by max(N - correction, 0): a zero divisor gives inf/nan.
    double divisor = std::max(double(n) - correction, 0.0);
    rewriter.replaceOp(op, b.scale(squares, 1.0 / divisor));
    return success();
  }
};

/// native_batch_norm(x, w, b, rm, rv, training=True, momentum, eps) over the
/// batch's statistics per channel (dim 1): mean = mean(x), invstd =
/// rsqrt(mean((x - mean)^2) + eps), y = (x - mean) * invstd * w + b; results
/// 1 and 2 are mean and invstd as (C). The running statistics' update is
/// recorded as ops of its own by capture (the ATen schema does not show it).
struct BatchNormTraining : OpRewritePattern<AtenNativeBatchNormOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AtenNativeBatchNormOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.getTraining())
      return rewriter.notifyMatchFailure(op, "eval mode (folded or fused)");
    auto type = op.getInput().getType().cast<RankedTensorType>();
    if (type.getRank() < 2 || !type.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "dynamic or rank < 2 input");
    auto chan = channelShape(type, 1);
    // Checked before anything is created: a pattern that fails must leave the
    // graph as it was (else the driver never settles).
    auto statType = [&](unsigned i) {
      return op->getResult(i).getType().cast<RankedTensorType>();
    };
    if (!statType(1).hasStaticShape() || !statType(2).hasStaticShape() ||
        statType(1).getNumElements() != chan.getNumElements() ||
        statType(2).getNumElements() != chan.getNumElements())
      return rewriter.notifyMatchFailure(op, "unexpected statistics shape");
    Builder b{rewriter, op.getLoc()};
    SmallVector<int64_t> dims = batchDims(type);
    Value mean = b.mean(op.getInput(), dims);
    Value centered = b.sub(op.getInput(), mean, type);
    Value var = b.mean(b.mul(centered, centered, type), dims);
    Value invstd = rewriter.create<AtenRsqrtOp>(
        b.loc, chan,
        rewriter.create<AtenAddScalarOp>(b.loc, chan, var,
                                         b.f64(op.getEps().convertToDouble()),
                                         Attribute()));
    Value y = b.mul(centered, invstd, type);
    y = b.affine(y, op.getWeight(), op.getBias(), chan);
    rewriter.replaceOp(
        op, {y, b.view(mean, statType(1)), b.view(invstd, statType(2))});
    return success();
  }
};

/// native_group_norm(x, w, b, N, C, HxW, G, eps): x viewed as (N, G, rest);
/// mean and rstd = rsqrt(mean((x - mean)^2) + eps) over `rest`, y = (x -
/// mean) * rstd in x's shape, then * w + b per channel (dim 1). Results 1
/// and 2 are mean and rstd as (N, G). GroupNorm in wav2vec2's feature
/// encoder and PoolFormer.
struct GroupNorm : OpRewritePattern<AtenNativeGroupNormOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AtenNativeGroupNormOp op,
                                PatternRewriter &rewriter) const override {
    auto type = op.getInput().getType().cast<RankedTensorType>();
    if (type.getRank() < 2 || !type.hasStaticShape() ||
        !type.getElementType().isa<FloatType>())
      return rewriter.notifyMatchFailure(op, "dynamic, rank < 2 or integer");
    int64_t n = type.getDimSize(0), c = type.getDimSize(1), g = op.getGroup();
    if (g <= 0 || c % g != 0 || n * g == 0)
      return rewriter.notifyMatchFailure(op, "channels not divisible");
    auto perChannel = [&](Value v) {
      if (!v)
        return true;
      auto t = v.getType().cast<RankedTensorType>();
      return t.hasStaticShape() && t.getNumElements() == c;
    };
    if (!perChannel(op.getWeight()) || !perChannel(op.getBias()))
      return rewriter.notifyMatchFailure(op,
                                         "weight or bias is not per channel");
    auto statType = [&](unsigned i) {
      return op->getResult(i).getType().cast<RankedTensorType>();
    };
    // A statistics result nothing reads may have any placeholder type.
    auto statFits = [&](unsigned i) {
      return op->getResult(i).use_empty() ||
             (statType(i).hasStaticShape() &&
              statType(i).getNumElements() == n * g);
    };
    if (!statFits(1) || !statFits(2))
      return rewriter.notifyMatchFailure(op, "unexpected statistics shape");
    Type elem = type.getElementType();
    auto grouped =
        RankedTensorType::get({n, g, type.getNumElements() / (n * g)}, elem);
    auto stat = RankedTensorType::get({n, g, 1}, elem);
    Builder b{rewriter, op.getLoc()};
    Value x = b.view(op.getInput(), grouped);
    Value mean = b.mean(x, {2});
    Value centered = b.sub(x, mean, grouped);
    Value var = b.mean(b.mul(centered, centered, grouped), {2});
    Value rstd = rewriter.create<AtenRsqrtOp>(
        b.loc, stat,
        rewriter.create<AtenAddScalarOp>(b.loc, stat, var,
                                         b.f64(op.getEps().convertToDouble()),
                                         Attribute()));
    Value y = b.view(b.mul(centered, rstd, grouped), type);
    auto chan = channelShape(type, 1);
    y = b.affine(y, op.getWeight(), op.getBias(), chan);
    auto statValue = [&](Value v, unsigned i) {
      return op->getResult(i).use_empty() ? v : b.view(v, statType(i));
    };
    rewriter.replaceOp(op, {y, statValue(mean, 1), statValue(rstd, 2)});
    return success();
  }
};

/// The dims of `type` but `keep` (all of them for keep = -1, as
/// _weight_norm_interface reads it), sorted.
SmallVector<int64_t> dimsExcept(RankedTensorType type, int64_t keep) {
  SmallVector<int64_t> dims;
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (d != keep)
      dims.push_back(d);
  return dims;
}

/// The Euclidean norm of x over `dims` with kept dims: sqrt(sum(x * x)).
Value euclideanNorm(Builder &b, Value x, ArrayRef<int64_t> dims) {
  auto type = x.getType().cast<RankedTensorType>();
  Value sum = b.sum(b.mul(x, x, type), dims);
  return b.rewriter.create<AtenSqrtOp>(b.loc, sum.getType(), sum);
}

/// The p-norm of x over `dims` with kept dims, as ATen's vector_norm: 2
/// sqrt(sum(x * x)), 1 sum(|x|), +-inf amax/amin(|x|), 0 the count of
/// nonzeros, any other p sum(|x|^p)^(1/p).
Value pNorm(Builder &b, Value x, ArrayRef<int64_t> dims, double p) {
  if (p == 2.0)
    return euclideanNorm(b, x, dims);
  auto type = x.getType().cast<RankedTensorType>();
  PatternRewriter &r = b.rewriter;
  if (p == 0.0) {
    Value nonzero = r.create<AtenNeScalarOp>(
        b.loc, RankedTensorType::get(type.getShape(), r.getI1Type()), x,
        b.f64(0.0));
    return b.sum(dynoc::convertElementType(r, b.loc, nonzero,
                                           type.getElementType()),
                 dims);
  }
  Value magnitude = r.create<AtenAbsOp>(b.loc, type, x);
  if (std::isinf(p)) {
    SmallVector<int64_t> shape(type.getShape());
    for (int64_t d : dims)
      shape[d] = 1;
    auto kept = RankedTensorType::get(shape, type.getElementType());
    auto dimsAttr = r.getDenseI64ArrayAttr(dims);
    if (p > 0)
      return r.create<AtenAmaxOp>(b.loc, kept, magnitude, dimsAttr,
                                  r.getBoolAttr(true));
    return r.create<AtenAminOp>(b.loc, kept, magnitude, dimsAttr,
                                r.getBoolAttr(true));
  }
  if (p == 1.0)
    return b.sum(magnitude, dims);
  Value powered =
      r.create<AtenPowTensorScalarOp>(b.loc, type, magnitude, b.f64(p));
  Value sum = b.sum(powered, dims);
  return r.create<AtenPowTensorScalarOp>(b.loc, sum.getType(), sum,
                                         b.f64(1.0 / p));
}

/// linalg_vector_norm(x, ord, dim, keepdim) and norm.ScalarOpt_dim(x, p,
/// dim, keepdim) of a float tensor: pNorm over the dims (all of them where
/// none are named). A dtype stays (a located build error). ConvNeXt V2's
/// global response normalization; torch.norm.
template <class Op>
struct VectorNorm : OpRewritePattern<Op> {
  using OpRewritePattern<Op>::OpRewritePattern;
  LogicalResult matchAndRewrite(Op op,
                                PatternRewriter &rewriter) const override {
    auto type = op.getSelf().getType().template cast<RankedTensorType>();
    auto resultType = op.getType().template cast<RankedTensorType>();
    if (!type.hasStaticShape() ||
        !type.getElementType().template isa<FloatType>() ||
        op->getAttr("dtype") ||
        resultType.getElementType() != type.getElementType())
      return rewriter.notifyMatchFailure(op, "dynamic, integer or a dtype");
    double p = 2.0;
    if (Attribute ord = op->getAttr(op->hasAttr("ord") ? "ord" : "p")) {
      if (auto f = ord.dyn_cast<FloatAttr>())
        p = f.getValueAsDouble();
      else if (auto i = ord.dyn_cast<IntegerAttr>())
        p = double(i.getInt());
      else
        return rewriter.notifyMatchFailure(op, "an order that is no number");
    }
    SmallVector<int64_t> dims;
    if (auto d = op->template getAttrOfType<DenseI64ArrayAttr>("dim"))
      for (int64_t v : d.asArrayRef()) {
        if (v < -type.getRank() || v >= type.getRank())
          return rewriter.notifyMatchFailure(op, "dim out of range");
        dims.push_back(v < 0 ? v + type.getRank() : v);
      }
    if (dims.empty())
      dims = dimsExcept(type, -1);
    llvm::sort(dims);
    if (std::adjacent_find(dims.begin(), dims.end()) != dims.end())
      return rewriter.notifyMatchFailure(op, "a dim named twice");
    Builder b{rewriter, op.getLoc()};
    Value norm = pNorm(b, op.getSelf(), dims, p);
    auto keep = op->template getAttrOfType<BoolAttr>("keepdim");
    if (!(keep && keep.getValue()))
      norm = b.view(norm, resultType);
    rewriter.replaceOp(op, norm);
    return success();
  }
};

/// _weight_norm_interface(v, g, dim) = (v * (g / norm), norm), norm the
/// Euclidean norm of v over every dim but `dim` (all dims for -1), shaped as
/// g. torch.nn.utils.weight_norm (wav2vec2's positional convolution).
struct WeightNorm : OpRewritePattern<WeightNormInterfaceOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(WeightNormInterfaceOp op,
                                PatternRewriter &rewriter) const override {
    auto type = op.getV().getType().cast<RankedTensorType>();
    auto g = op.getG().getType().cast<RankedTensorType>();
    int64_t dim = op.getDim().value_or(0);
    if (!type.hasStaticShape() || !type.getElementType().isa<FloatType>() ||
        g != op->getResult(1).getType() || dim < -1 || dim >= type.getRank() ||
        !g.hasStaticShape() ||
        g.getNumElements() != (dim == -1 ? 1 : type.getDimSize(dim)))
      return rewriter.notifyMatchFailure(op, "unexpected shapes or dim");
    Builder b{rewriter, op.getLoc()};
    Value norm = euclideanNorm(b, op.getV(), dimsExcept(type, dim));
    if (norm.getType() != g)
      norm = b.view(norm, g);
    Value scale = rewriter.create<AtenDivTensorOp>(b.loc, g, op.getG(), norm);
    rewriter.replaceOp(op, {b.mul(op.getV(), scale, type), norm});
    return success();
  }
};

/// native_batch_norm_backward(g, x, w, rm, rv, mean, invstd, train, eps,
/// mask). Per channel, over the other dims, with x^ = (x - mean) * invstd:
/// dw = sum(g * x^), db = sum(g), and dx = w * invstd * (g - mean(g) - x^ *
/// mean(g * x^)) in training, dx = g * w * rsqrt(rv + eps) in eval mode.
/// Results the mask leaves out (or that nothing reads) are not computed.
struct BatchNormBackward : OpRewritePattern<AtenNativeBatchNormBackwardOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AtenNativeBatchNormBackwardOp op,
                                PatternRewriter &rewriter) const override {
    auto type = op.getInput().getType().cast<RankedTensorType>();
    if (type.getRank() < 2 || !type.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "dynamic or rank < 2 input");
    bool train = op.getTrain();
    Value mean = train ? op.getSaveMean() : op.getRunningMean();
    if (!mean || (train ? !op.getSaveInvstd() : !op.getRunningVar()))
      return rewriter.notifyMatchFailure(op, "statistics not given");
    if (dynoc::usesMaskedResult(op, op.getOutputMask()))
      return rewriter.notifyMatchFailure(op, "a result the mask leaves out "
                                             "is used");
    Builder b{rewriter, op.getLoc()};
    auto chan = channelShape(type, 1);
    SmallVector<int64_t> dims = batchDims(type);
    Value invstd;
    if (train) {
      invstd = b.view(op.getSaveInvstd(), chan);
    } else {
      Value rv = b.view(op.getRunningVar(), chan);
      invstd = rewriter.create<AtenRsqrtOp>(
          b.loc, chan,
          rewriter.create<AtenAddScalarOp>(b.loc, chan, rv,
                                           b.f64(op.getEps().convertToDouble()),
                                           Attribute()));
    }
    Value g = op.getGradOut();
    Value xhat =
        b.mul(b.sub(op.getInput(), b.view(mean, chan), type), invstd, type);
    ArrayRef<bool> mask = op.getOutputMask();
    auto wanted = [&](unsigned i) {
      return (i >= mask.size() || mask[i]) && !op->getResult(i).use_empty();
    };
    auto channelSum = [&](Value v, unsigned result) {
      auto t = op->getResult(result).getType().cast<RankedTensorType>();
      return b.view(b.sum(v, dims), t);
    };
    Value dx, dw, db;
    if (wanted(0)) {
      Value wInvstd = op.getWeight()
                          ? b.mul(b.view(op.getWeight(), chan), invstd, chan)
                          : invstd;
      if (train) {
        Value inner =
            b.sub(b.sub(g, b.mean(g, dims), type),
                  b.mul(xhat, b.mean(b.mul(g, xhat, type), dims), type), type);
        dx = b.mul(inner, wInvstd, type);
      } else {
        dx = b.mul(g, wInvstd, type);
      }
    }
    if (wanted(1))
      dw = channelSum(b.mul(g, xhat, type), 1);
    if (wanted(2))
      db = channelSum(g, 2);
    rewriter.replaceOp(op, {dx, dw, db});
    return success();
  }
};
/// mean.dim / sum.dim_IntList over dims that are not adjacent (a mean over
/// the batch and the spatial dims, (0, 2, 3)): one reduction per run of
/// adjacent dims (Builder::reduce), then a view without the reduced dims
/// unless keepdim. The code generators reduce adjacent dims only.
template <typename ReduceOp, bool IsMean>
struct SplitReduction : OpRewritePattern<ReduceOp> {
  using OpRewritePattern<ReduceOp>::OpRewritePattern;
  LogicalResult matchAndRewrite(ReduceOp op,
                                PatternRewriter &rewriter) const override {
    auto type = op.getSelf().getType().template cast<RankedTensorType>();
    auto resultType = op.getType().template cast<RankedTensorType>();
    auto dimAttr = op.getDimAttr();
    if (!dimAttr || op.getDtypeAttr() || !type.hasStaticShape() ||
        !resultType.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "no dims, a dtype or dynamic");
    SmallVector<int64_t> dims;
    for (int64_t v : dimAttr.asArrayRef()) {
      if (v < -type.getRank() || v >= type.getRank())
        return rewriter.notifyMatchFailure(op, "dim out of range");
      dims.push_back(v < 0 ? v + type.getRank() : v);
    }
    llvm::sort(dims);
    dims.erase(std::unique(dims.begin(), dims.end()), dims.end());
    bool adjacent = true;
    for (size_t i = 1; i < dims.size(); ++i)
      adjacent &= dims[i] == dims[i - 1] + 1;
    if (adjacent)
      return rewriter.notifyMatchFailure(op, "adjacent dims");
    Builder b{rewriter, op.getLoc()};
    Value r = b.reduce(op.getSelf(), dims, IsMean);
    if (!op.getKeepdim().value_or(false))
      r = b.view(r, resultType);
    rewriter.replaceOp(op, r);
    return success();
  }
};
} // namespace

namespace {
/// max(x) / min(x) of a whole tensor (`t.max()`) = amax / amin over every
/// dim: the reduction both backends have.
template <class Op, class Reduce>
struct WholeTensorReduction : OpRewritePattern<Op> {
  using OpRewritePattern<Op>::OpRewritePattern;
  LogicalResult matchAndRewrite(Op op,
                                PatternRewriter &rewriter) const override {
    auto type = op.getSelf().getType().template cast<RankedTensorType>();
    SmallVector<int64_t> dims; // none for a 0-d tensor: its one element
    for (int64_t d = 0; d < type.getRank(); ++d)
      dims.push_back(d);
    rewriter.replaceOpWithNewOp<Reduce>(op, op.getType(), op.getSelf(),
                                        rewriter.getDenseI64ArrayAttr(dims),
                                        rewriter.getBoolAttr(false));
    return success();
  }
};

/// The dims any/all reduce: all of them (none of a 0-d tensor) where the op
/// names none, else those it names, wrapped.
SmallVector<int64_t> truthDims(Operation *op, int64_t rank) {
  SmallVector<int64_t> dims;
  if (auto one = op->getAttrOfType<IntegerAttr>("dim"))
    dims.push_back(one.getInt());
  else if (auto many = op->getAttrOfType<DenseI64ArrayAttr>("dim"))
    dims.assign(many.asArrayRef().begin(), many.asArrayRef().end());
  if (dims.empty())
    for (int64_t d = 0; d < rank; ++d)
      dims.push_back(d);
  for (int64_t &d : dims)
    if (d < 0)
      d += std::max<int64_t>(rank, 1);
  if (rank == 0)
    dims.clear();
  return dims;
}

/// any / all (of a whole tensor, along a dim, along dims): amax / amin of the
/// bool tensor `x != 0` (NaN counts as true, as in ATen); the result converts
/// to uint8 where ATen gives uint8 (a uint8 input's).
template <class Op, class Reduce>
struct TruthReduction : OpRewritePattern<Op> {
  using OpRewritePattern<Op>::OpRewritePattern;
  LogicalResult matchAndRewrite(Op op,
                                PatternRewriter &rewriter) const override {
    auto type = op.getSelf().getType().template cast<RankedTensorType>();
    auto resultType = op.getType().template cast<RankedTensorType>();
    Type i1 = rewriter.getI1Type();
    Value truth = op.getSelf();
    if (!type.getElementType().isInteger(1))
      truth = rewriter.create<AtenNeScalarOp>(
          op.getLoc(), RankedTensorType::get(type.getShape(), i1), truth,
          type.getElementType().template isa<FloatType>()
              ? Attribute(rewriter.getF64FloatAttr(0.0))
              : Attribute(rewriter.getI64IntegerAttr(0)));
    auto keep = op->template getAttrOfType<BoolAttr>("keepdim");
    Value reduced = rewriter.create<Reduce>(
        op.getLoc(), RankedTensorType::get(resultType.getShape(), i1), truth,
        rewriter.getDenseI64ArrayAttr(truthDims(op, type.getRank())),
        rewriter.getBoolAttr(keep && keep.getValue()));
    if (!resultType.getElementType().isInteger(1))
      reduced = dynoc::convertElementType(rewriter, op.getLoc(), reduced,
                                          resultType.getElementType());
    rewriter.replaceOp(op, reduced);
    return success();
  }
};

/// max.dim / min.dim (values and indices along one dim) = amax / amin and
/// argmax / argmin over it: the first index of the extremum (or of the first
/// NaN, whose value both give), as ATen's CPU kernels.
template <class Op, class Reduce, class Arg>
struct ExtremumAlongDim : OpRewritePattern<Op> {
  using OpRewritePattern<Op>::OpRewritePattern;
  LogicalResult matchAndRewrite(Op op,
                                PatternRewriter &rewriter) const override {
    int64_t dim = op.getDim();
    BoolAttr keep = rewriter.getBoolAttr(op.getKeepdim().value_or(false));
    Value values = rewriter.create<Reduce>(
        op.getLoc(), op.getValues().getType(), op.getSelf(),
        rewriter.getDenseI64ArrayAttr({dim}), keep);
    Value indices = rewriter.create<Arg>(op.getLoc(), op.getIndices().getType(),
                                         op.getSelf(),
                                         rewriter.getI64IntegerAttr(dim), keep);
    rewriter.replaceOp(op, {values, indices});
    return success();
  }
};
} // namespace

void dynoc::populateStatisticsDecompositions(RewritePatternSet &patterns) {
  patterns.add<VarCorrection, BatchNormTraining, BatchNormBackward, GroupNorm,
               VectorNorm<AtenLinalgVectorNormOp>,
               VectorNorm<AtenNormScalarOptDimOp>, WeightNorm, SplitReduction<AtenMeanDimOp, true>,
               SplitReduction<AtenSumDimIntListOp, false>,
               WholeTensorReduction<AtenMaxOp, AtenAmaxOp>,
               WholeTensorReduction<AtenMinOp, AtenAminOp>,
               ExtremumAlongDim<AtenMaxDimOp, AtenAmaxOp, AtenArgmaxOp>,
               ExtremumAlongDim<AtenMinDimOp, AtenAminOp, AtenArgminOp>,
               TruthReduction<AtenAnyOp, AtenAmaxOp>,
               TruthReduction<AtenAnyDimOp, AtenAmaxOp>,
               TruthReduction<AtenAnyDimsOp, AtenAmaxOp>,
               TruthReduction<AtenAllOp, AtenAminOp>,
               TruthReduction<AtenAllDimOp, AtenAminOp>,
               TruthReduction<AtenAllDimsOp, AtenAminOp>>(
      patterns.getContext());
}
