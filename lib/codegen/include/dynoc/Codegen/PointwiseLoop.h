//===- PointwiseLoop.h - a target-neutral pointwise kernel ------*- C++ -*-===//
//
// What a fusion group (or one elementwise op) computes, independent of how a
// target loops: an output of some shape written densely, inputs read at
// (broadcast) strides over that shape, and a straight-line body of scalar
// statements (ScalarExpr.h). The CPU printer turns it into an OpenMP row loop
// with a SIMD inner loop (lib/codegen_cpu/PrintPointwise.cpp); the CUDA
// printer into a grid-stride kernel.
//
//===----------------------------------------------------------------------===//
#ifndef DYNOC_CODEGEN_POINTWISELOOP_H
#define DYNOC_CODEGEN_POINTWISELOOP_H

#include "dynoc/Codegen/Dims.h"

#include <string>
#include <vector>

namespace dynoc {
namespace codegen {

struct PointwiseLoop {
  struct Input {
    std::string buffer; ///< the pointer it is read from
    DimList strides;    ///< element strides over `shape` (0: broadcast)
  };
  DimList shape;             ///< the output's dims; the loop runs over them
  std::vector<Input> inputs; ///< read into x0, x1, ... per element
  /// Statements in order: temporary `t<k>` = expression over x* and earlier
  /// temporaries.
  std::vector<std::string> temps;
  std::string result; ///< what each output element is: an x* or a t*
  std::string output; ///< the dense output buffer
  /// The C type the body computes in (inputs are converted on read).
  std::string computeType = "float";

  /// The name the body uses for input `k`.
  static std::string inputName(size_t k) { return "x" + std::to_string(k); }
  /// Adds an input; returns its name in the body.
  std::string addInput(std::string buffer, DimList strides) {
    inputs.push_back({std::move(buffer), std::move(strides)});
    return inputName(inputs.size() - 1);
  }
  /// Adds a statement; returns the temporary holding its value.
  std::string addTemp(std::string expr) {
    temps.push_back(std::move(expr));
    return "t" + std::to_string(temps.size() - 1);
  }
};

} // namespace codegen
} // namespace dynoc

#endif // DYNOC_CODEGEN_POINTWISELOOP_H
