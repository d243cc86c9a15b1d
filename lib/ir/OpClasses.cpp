//===- OpClasses.cpp - what kind of work an aten op does -----------------===//
#include "dynoc/IR/OpClasses.h"

#include "mlir/IR/Operation.h"
#include "llvm/ADT/StringSet.h"

bool dynoc::isDataMovementOp(mlir::Operation *op) {
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
                                          "aten.lift_fresh_copy",
                                          "aten.lift_fresh",
                                          "aten._to_copy",
                                          "aten.expand",
                                          "aten.slice.Tensor",
                                          "aten.select.int",
                                          "aten.cat",
                                          "aten.stack",
                                          "aten.unbind.int",
                                          "aten.split.Tensor",
                                          "aten.t",
                                          "aten.transpose.int",
                                          "aten.permute",
                                          "aten.gather",
                                          "aten.index.Tensor",
                                          "aten.embedding",
                                          "aten.arange",
                                          "aten.full",
                                          "aten.ones",
                                          "aten.zeros",
                                          "aten.ones_like",
                                          "aten.zeros_like",
                                          "aten.full_like",
                                          "aten.dropout"};
  return names.contains(op->getName().getStringRef());
}
