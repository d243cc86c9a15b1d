//===- ShapeFunctions.h - result shapes and dtypes of aten ops --*- C++ -*-===//
//
// Shape functions for the aten ops the compiler runs. A dim is an AffineExpr
// over the graph's dim symbols (s0 = the first dynamic input dim, ...): a
// constant for a static dim, `s0 * 2` or `(s0 - 3) floordiv 2 + 1` for one
// computed from dynamic dims, or a null expression where the rule cannot say
// (a data-dependent size, a clamp of a dynamic dim). dynoc-infer-shapes uses
// them to refine and check the types capture wrote.
//
//===----------------------------------------------------------------------===//
#ifndef DYNOC_PASSES_SHAPEFUNCTIONS_H
#define DYNOC_PASSES_SHAPEFUNCTIONS_H

#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/Operation.h"
#include "mlir/Support/LogicalResult.h"
#include "llvm/ADT/SmallVector.h"

namespace dynoc {

/// One tensor's dims; a null entry is a dim the rule cannot express.
using SymbolicShape = llvm::SmallVector<mlir::AffineExpr, 4>;

/// Whether `op` has a shape function.
bool hasShapeFunction(mlir::Operation *op);

/// Computes the shape of each result of `op` from its operands' shapes
/// (`operands`, one per operand, in order) and its attributes. Results whose
/// shape the rule leaves open hold null dims (the result's rank comes from its
/// type). Fails, with a diagnostic at the op, when the operands and attributes
/// do not fit together (dims that do not broadcast, a view whose element count
/// does not match, a dim out of range).
mlir::LogicalResult
inferResultShapes(mlir::Operation *op, llvm::ArrayRef<SymbolicShape> operands,
                  llvm::SmallVectorImpl<SymbolicShape> &results);

/// The element type of result `index` of `op` implied by its operands and
/// attributes, or a null type where it is not determined by this table (mixed
/// operand dtypes follow ATen's promotion, which the types capture wrote
/// already record).
mlir::Type inferResultElementType(mlir::Operation *op, unsigned index);

} // namespace dynoc

#endif // DYNOC_PASSES_SHAPEFUNCTIONS_H
