//===- WindowAttrs.h - a window op's attributes, verified -------*- C++ -*-===//
//
// The trait Aten_WindowAttrs (AtenBase.td) of ops with a convolution's or
// pooling's window. A stride or dilation of 0 would divide by zero in shape
// code; a negative kernel or padding has no meaning. Each is an error at the
// op in ATen's words, when the op is verified: after parsing and after
// every pass, before anything computes with them.
//
//===----------------------------------------------------------------------===//
#ifndef DYNOC_IR_WINDOWATTRS_H
#define DYNOC_IR_WINDOWATTRS_H

#include "mlir/IR/OpDefinition.h"

namespace dynoc::aten {
/// Checks `op`'s stride, padding, dilation, kernel_size, output_padding and
/// groups attributes, where it has them.
mlir::LogicalResult verifyWindowAttrs(mlir::Operation *op);

namespace OpTrait {
template <typename ConcreteType>
class WindowAttrs : public mlir::OpTrait::TraitBase<ConcreteType, WindowAttrs> {
public:
  static mlir::LogicalResult verifyTrait(mlir::Operation *op) {
    return verifyWindowAttrs(op);
  }
};
} // namespace OpTrait
} // namespace dynoc::aten

#endif // DYNOC_IR_WINDOWATTRS_H
