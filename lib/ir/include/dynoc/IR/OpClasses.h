//===- OpClasses.h - what kind of work an aten op does ----------*- C++ -*-===//
//
// Classifications that passes and code generators share.
//
//===----------------------------------------------------------------------===//
#ifndef DYNOC_IR_OPCLASSES_H
#define DYNOC_IR_OPCLASSES_H

namespace mlir {
class Operation;
} // namespace mlir

namespace dynoc {
/// Ops that only move, copy, select or fill elements (views, transposes,
/// slicing, concatenation, gathers, dtype conversion, constant fills): they
/// compute nothing, so they run in any element type, the reduced-precision
/// ones included.
bool isDataMovementOp(mlir::Operation *op);
/// The data movement ops that only re-view or copy their operand (views,
/// reshapes, transposes, copies, expands), which kernels can read in place.
bool isLayoutOp(mlir::Operation *op);
} // namespace dynoc

#endif // DYNOC_IR_OPCLASSES_H
