//===- ScalarExpr.h - elementwise ops as scalar C expressions ---*- C++ -*-===//
//
// Target-neutral: the one table from an elementwise aten op to the scalar
// expression it computes, in C syntax that is valid C++ and CUDA C++ alike
// (std:: math functions, which nvcc provides in device code, and the
// `dynoc_k::` helpers each target's prelude defines: gelu, gelu_tanh). The CPU
// printer uses it for single-op loops and fusion groups; the CUDA printer for
// its kernels. An op added here works on both targets.
//
//===----------------------------------------------------------------------===//
#ifndef DYNOC_CODEGEN_SCALAREXPR_H
#define DYNOC_CODEGEN_SCALAREXPR_H

#include "mlir/IR/Operation.h"
#include "mlir/Support/LogicalResult.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <string>

namespace dynoc {
namespace codegen {

/// A float literal of C type float (`1.000000000e+00f`, INFINITY, NAN).
std::string fmtFloat(double v);
/// A number as a literal of the C type `ctype` computes in: a float literal
/// for float, an integer one for integral values in int64_t/int32_t/bool,
/// else double.
std::string fmtLiteral(double v, llvm::StringRef ctype);
/// A numeric attribute of `op` (int, float or bool) as a double, or `dflt`.
double scalarAttr(mlir::Operation *op, llvm::StringRef name, double dflt);
/// The C operator of a comparison op (eq.Tensor, gt.Scalar, ...), or "".
llvm::StringRef comparisonOperator(llvm::StringRef opName);

/// The scalar expression of elementwise op `op` applied to `args` (one C
/// expression per tensor operand, in operand order), computing in C type
/// `ctype` (float, double, int64_t, ...; a comparison's `ctype` is its
/// operands' promoted type). Returns "" for an op this table does not have,
/// and failure, with a diagnostic at the op, for an attribute it cannot
/// print (gelu's unknown approximation, div's rounding mode).
mlir::FailureOr<std::string> elementwiseExpr(mlir::Operation *op,
                                             llvm::ArrayRef<std::string> args,
                                             llvm::StringRef ctype);

/// Whether `op` divides integers (div with a rounding mode, remainder, fmod
/// on an integer result): a zero divisor raises ZeroDivisionError in ATen, so
/// the target checks for one before the op runs.
bool isIntegerDivision(mlir::Operation *op);

} // namespace codegen
} // namespace dynoc

#endif // DYNOC_CODEGEN_SCALAREXPR_H
