//===- SharedDecompositions.h - pieces a forward and its backward share ---===//
//
// Values an op's decomposition and its backward's both compute (glu's halves,
// log-sigmoid's exp(-|x|)), stated once (PointwiseDecompositions.cpp,
// BackwardDecompositions.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef DYNOC_PASSES_SHAREDDECOMPOSITIONS_H
#define DYNOC_PASSES_SHAREDDECOMPOSITIONS_H

#include "dynoc/IR/AtenDialect.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/PatternMatch.h"

#include <optional>
#include <utility>

namespace dynoc::decompositions {

/// glu's halves a and b of `x` along `dim` (negative counts from the end),
/// each of `halfType`; none where dim is not a static, even one.
inline std::optional<std::pair<mlir::Value, mlir::Value>>
halvesAlong(mlir::PatternRewriter &rewriter, mlir::Location loc, mlir::Value x,
            int64_t dim, mlir::RankedTensorType halfType) {
  auto type = x.getType().cast<mlir::RankedTensorType>();
  if (dim < 0)
    dim += type.getRank();
  if (dim < 0 || dim >= type.getRank() || type.isDynamicDim(dim) ||
      type.getDimSize(dim) % 2)
    return std::nullopt;
  const int64_t half = type.getDimSize(dim) / 2;
  auto slice = [&](int64_t start) -> mlir::Value {
    return rewriter.create<aten::AtenSliceTensorOp>(
        loc, halfType, x, rewriter.getI64IntegerAttr(dim),
        rewriter.getI64IntegerAttr(start), rewriter.getI64IntegerAttr(start + half),
        rewriter.getI64IntegerAttr(1));
  };
  mlir::Value a = slice(0);
  return std::make_pair(a, slice(half));
}

/// exp(-|x|): log-sigmoid's z (ATen's CPU buffer).
inline mlir::Value expNegAbs(mlir::PatternRewriter &rewriter, mlir::Location loc,
                             mlir::Value x) {
  mlir::Type t = x.getType();
  mlir::Value abs = rewriter.create<aten::AtenAbsOp>(loc, t, x);
  return rewriter.create<aten::AtenExpOp>(loc, t,
                                          rewriter.create<aten::AtenNegOp>(loc, t, abs));
}

} // namespace dynoc::decompositions

#endif // DYNOC_PASSES_SHAREDDECOMPOSITIONS_H
