//===- OpClasses.cpp - what kind of work an aten op does -----------------===//
#include "dynoc/IR/OpClasses.h"

#include "mlir/IR/Operation.h"
#include "llvm/ADT/StringSet.h"

bool dynoc::isLayoutOp(mlir::Operation *op) {
  static const llvm::StringSet<> names = {"aten.view",
                                          "aten._unsafe_view",
                                          "aten.reshape",
                                          "aten.clone",
                                          "aten.contiguous",
                                          "aten.alias",
                                          "aten.detach",
                                          "aten.flatten.using_ints",
                                          "aten.unsqueeze",
                                          "aten.squeeze.dim",
                                          "aten.squeeze.dims",
                                          "aten.squeeze",
                                          "aten.t",
                                          "aten.transpose.int",
                                          "aten.permute",
                                          "aten.expand",
                                          "aten.expand_as",
                                          "aten.view_as",
                                          "aten.lift_fresh_copy",
                                          "aten.lift_fresh"};
  return names.contains(op->getName().getStringRef());
}

bool dynoc::isDataMovementOp(mlir::Operation *op) {
  // Beyond the layout ops: conversions, selection, concatenation, gathers
  // and fills.
  static const llvm::StringSet<> names = {"aten._to_copy",
                                          "aten.as_strided",
                                          "aten.slice.Tensor",
                                          "aten.select.int",
                                          "aten.cat",
                                          "aten.stack",
                                          "aten.unbind.int",
                                          "aten.split.Tensor",
                                          "aten.gather",
                                          "aten.index.Tensor",
                                          "aten.index_put",
                                          "aten.embedding",
                                          "aten.arange",
                                          "aten.full",
                                          "aten.ones",
                                          "aten.zeros",
                                          "aten.ones_like",
                                          "aten.zeros_like",
                                          "aten.full_like",
                                          "aten.dropout",
                                          "aten.arange.start",
                                          "aten.arange.start_step",
                                          "aten.unsafe_split.Tensor",
                                          "aten.zero",
                                          "aten.empty_like",
                                          "aten.empty.memory_format",
                                          "aten.new_ones",
                                          "aten.new_zeros",
                                          "aten.new_empty",
                                          "aten.empty_strided",
                                          "aten.new_empty_strided",
                                          "aten.scalar_tensor"};
  return isLayoutOp(op) || names.contains(op->getName().getStringRef());
}
