//===- ScalarExpr.cpp - elementwise ops as scalar C expressions -----------===//
#include "dynoc/Codegen/ScalarExpr.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <optional>

using namespace mlir;

namespace dynoc {
namespace codegen {

std::string fmtFloat(double v) {
  if (std::isinf(v))
    return v > 0 ? "INFINITY" : "-INFINITY";
  if (std::isnan(v))
    return "NAN";
  return llvm::formatv("{0:e9}f", v).str();
}

std::string fmtLiteral(double v, StringRef ctype) {
  if (ctype == "float")
    return fmtFloat(v);
  if ((ctype == "int64_t" || ctype == "int32_t" || ctype == "int16_t" ||
       ctype == "int8_t" || ctype == "uint8_t" || ctype == "bool") &&
      v == std::floor(v) && std::fabs(v) < 9.2e18)
    return "int64_t(" + std::to_string(int64_t(v)) + ")";
  if (std::isinf(v))
    return v > 0 ? "double(INFINITY)" : "double(-INFINITY)";
  if (std::isnan(v))
    return "double(NAN)";
  return llvm::formatv("{0:e17}", v).str();
}

double scalarAttr(Operation *op, StringRef n, double dflt) {
  Attribute a = op->getAttr(n);
  if (!a)
    return dflt;
  if (auto i = a.dyn_cast<IntegerAttr>())
    return i.getType().isInteger(1) ? double(i.getValue().getBoolValue())
                                    : double(i.getInt());
  if (auto f = a.dyn_cast<FloatAttr>())
    return f.getValueAsDouble();
  if (auto b = a.dyn_cast<BoolAttr>())
    return b.getValue();
  return dflt;
}

StringRef comparisonOperator(StringRef n) {
  auto [base, overload] = n.split('.').second.split('.');
  if (!n.startswith("aten.") || (overload != "Tensor" && overload != "Scalar"))
    return "";
  return llvm::StringSwitch<StringRef>(base)
      .Case("eq", "==")
      .Case("ne", "!=")
      .Case("lt", "<")
      .Case("le", "<=")
      .Case("gt", ">")
      .Case("ge", ">=")
      .Default("");
}

namespace {
/// BinaryFunctions.def's expression of `op` on `a` and `b`, if it has one.
std::optional<std::string> tableExpr(StringRef op, const std::string &a,
                                     const std::string &b) {
  static const llvm::StringMap<const char *> table = {
#define DYNOC_BINARY_FUNCTION(OP, EXPRESSION, DTYPES) {OP, EXPRESSION},
#include "dynoc/Codegen/BinaryFunctions.def"
  };
  auto it = table.find(op);
  if (it == table.end())
    return std::nullopt;
  return llvm::formatv(it->second, a, b).str();
}

/// div with rounding_mode "trunc" or "floor" (or none: true division); floor
/// on floats as ATen computes it (from fmod, so that a quotient just under an
/// integer does not round up through a / b). Integer divisors are not zero
/// here (isIntegerDivision: the target checks first).
FailureOr<std::string> roundingDivision(Operation *op, const std::string &a,
                                        const std::string &b, StringRef ct) {
  auto mode = op->getAttrOfType<StringAttr>("rounding_mode");
  if (!mode)
    return a + " / " + b;
  if (mode.getValue() != "trunc" && mode.getValue() != "floor") {
    op->emitError() << "dynoc build: unknown rounding_mode '"
                    << mode.getValue() << "'";
    return failure();
  }
  if (ct != "float" && ct != "double")
    return mode.getValue() == "trunc"
               ? "(" + a + ") / (" + b + ")"
               : llvm::formatv("[](auto a, auto b) {{ auto q = a / b; "
                               "return a % b != 0 && (a < 0) != (b < 0) ? "
                               "q - 1 : q; }({0}, {1})",
                               a, b)
                     .str();
  if (mode.getValue() == "trunc")
    return "std::trunc(" + a + " / " + b + ")";
  return llvm::formatv(
             "[](auto a, auto b) {{ if (b == 0) return a / b; "
             "auto m = std::fmod(a, b); auto d = (a - m) / b; "
             "if (m != 0 && (b < 0) != (m < 0)) d -= 1; "
             "if (d == 0) return std::copysign(decltype(a)(0), a / b); "
             "auto f = std::floor(d); return d - f > decltype(a)(0.5) ? f + 1 "
             ": f; }({0}, {1})",
             a, b)
      .str();
}

/// remainder (the divisor's sign, as Python's %) and fmod (the dividend's,
/// as C's %) on integers, exactly; BinaryFunctions.def's are the floats'.
std::optional<std::string> integerModulo(StringRef n, const std::string &a,
                                         const std::string &b, StringRef ct) {
  if (ct == "float" || ct == "double")
    return std::nullopt;
  if (n.startswith("aten.fmod."))
    return "(" + a + ") % (" + b + ")";
  if (n.startswith("aten.remainder."))
    return llvm::formatv("[](auto a, auto b) {{ auto m = a % b; "
                         "return m != 0 && (m < 0) != (b < 0) ? m + b : m; "
                         "}({0}, {1})",
                         a, b)
        .str();
  return std::nullopt;
}

/// UnaryFunctions.def's expression of `op` on `x`, its attributes as
/// literals of C type `ct`, if it has one.
std::optional<std::string> unaryTableExpr(Operation *op, const std::string &x,
                                          StringRef ct) {
  struct Entry {
    const char *expression, *attributes;
  };
  static const llvm::StringMap<Entry> table = {
#define DYNOC_UNARY_FUNCTION(OP, EXPRESSION, DTYPES, ATTRIBUTES)               \
  {OP, {EXPRESSION, ATTRIBUTES}},
#include "dynoc/Codegen/UnaryFunctions.def"
  };
  auto it = table.find(op->getName().getStringRef());
  if (it == table.end())
    return std::nullopt;
  // "name=default,..." -> the op's values (or the defaults) as literals.
  std::string args[3];
  SmallVector<StringRef> attrs;
  StringRef(it->second.attributes).split(attrs, ',', -1, false);
  for (auto [i, attr] : llvm::enumerate(attrs)) {
    auto [attrName, dflt] = attr.split('=');
    double d = 0;
    dflt.getAsDouble(d);
    if (i < 3)
      args[i] = "(" + fmtLiteral(scalarAttr(op, attrName, d), ct) + ")";
  }
  return llvm::formatv(it->second.expression, x, args[0], args[1], args[2])
      .str();
}

/// One-operand ops: the expression of `x` in C type `ct`.
FailureOr<std::string> unaryExpr(Operation *op, const std::string &x,
                                 StringRef ct) {
  StringRef n = op->getName().getStringRef();
  const bool f32 = ct == "float";
  if (n == "aten.relu")
    return x + " > 0.f ? " + x + " : 0.f";
  if (n == "aten.neg")
    return "-" + x;
  if (n == "aten.abs")
    return "std::fabs(" + x + ")";
  if (n == "aten.sqrt")
    return "std::sqrt(" + x + ")";
  if (n == "aten.rsqrt")
    return "1.f / std::sqrt(" + x + ")";
  if (n == "aten.exp")
    return "std::exp(" + x + ")";
  if (std::optional<std::string> e = unaryTableExpr(op, x, ct))
    return *e;
  if (n == "aten.clamp" || n == "aten.clamp_min" || n == "aten.clamp_max") {
    // max(x, min) then min(., max), a NaN x staying NaN, as ATen's clamp.
    std::string e = x;
    auto bounded = [&](StringRef attr, StringRef cmp) {
      if (op->getAttr(attr))
        e = llvm::formatv("[](auto v, auto b) {{ return v {0} b ? b : v; "
                          "}({1}, {2})",
                          cmp, e, fmtLiteral(scalarAttr(op, attr, 0), ct))
                .str();
    };
    bounded("min", "<");
    bounded("max", ">");
    return e;
  }
  if (n == "aten.tanh")
    return "std::tanh(" + x + ")";
  if (n == "aten.sigmoid")
    return "1.f / (1.f + std::exp(-" + x + "))";
  if (n == "aten.silu")
    return x + " / (1.f + std::exp(-" + x + "))";
  if (n == "aten.logical_not")
    return "!" + x;
  if (n == "aten.bitwise_not") // bool: logical; integers: every bit
    return (ct == "bool" ? "!" : "~") + x;
  if (n == "aten.erf")
    return "std::erf(" + x + ")";
  if (n == "aten.reciprocal")
    return (f32 ? "1.f / " : "1.0 / ") + x;
  if (n == "aten.pow.Scalar") // a number to a tensor's powers (Adam's beta^t)
    return "std::pow(" + fmtLiteral(scalarAttr(op, "self", 1.0), ct) + ", " +
           x + ")";
  if (n == "aten._to_copy" && f32) {
    // A conversion inside a fused float loop: to bf16/f16 it rounds there,
    // as the separate op would.
    Type to = op->getResult(0).getType().cast<ShapedType>().getElementType();
    if (to.isF32())
      return x;
    if (to.isBF16() || to.isF16())
      return std::string("float(dynoc_k::") + (to.isBF16() ? "bf16" : "f16") +
             "(" + x + "))";
    return std::string();
  }
  if (n == "aten.leaky_relu")
    return x + " > 0 ? " + x + " : " + x + " * " +
           fmtLiteral(scalarAttr(op, "negative_slope", 0.01), ct);
  if (n == "aten.hardtanh") {
    // ATen's clamp: NaN stays NaN (both comparisons are false).
    std::string lo = fmtLiteral(scalarAttr(op, "min_val", -1.0), ct),
                hi = fmtLiteral(scalarAttr(op, "max_val", 1.0), ct);
    return "(" + x + " < " + lo + " ? " + lo + " : " + x + " > " + hi + " ? " +
           hi + " : " + x + ")";
  }
  if (n == "aten.gelu") {
    auto approx = op->getAttrOfType<StringAttr>("approximate");
    bool tanh = approx && approx.getValue() == "tanh";
    if (approx && approx.getValue() != "none" && !tanh) {
      op->emitError() << "dynoc build: unknown gelu approximation '"
                      << approx.getValue() << "'";
      return failure();
    }
    if (f32)
      return std::string(tanh ? "dynoc_k::gelu_tanh(" : "dynoc_k::gelu(") + x +
             ")";
    return tanh ? "0.5 * " + x + " * (1 + std::tanh(0.79788456080286516 * (" +
                      x + " + 0.044715 * " + x + " * " + x + " * " + x + ")))"
                : "0.5 * " + x + " * (1 + std::erf(" + x +
                      " * 0.70710678118654752440))";
  }
  // Tensor-scalar arithmetic and comparisons: `other` is an attribute.
  if (!op->getAttr("other"))
    return std::string();
  double other = scalarAttr(op, "other", 0.0),
         alpha = scalarAttr(op, "alpha", 1.0);
  std::string literal = (ct + "(" + fmtLiteral(other, ct) + ")").str();
  if (std::optional<std::string> e = integerModulo(n, x, literal, ct))
    return *e;
  if (std::optional<std::string> e = tableExpr(n, x, literal))
    return *e;
  if (n == "aten.div.Scalar_mode")
    return roundingDivision(op, x, literal, ct);
  if (n == "aten.add.Scalar")
    return x + " + " + fmtLiteral(alpha * other, ct);
  if (n == "aten.sub.Scalar")
    return x + " - " + fmtLiteral(alpha * other, ct);
  if (n == "aten.mul.Scalar")
    return x + " * " + fmtLiteral(other, ct);
  if (n == "aten.div.Scalar")
    return x + " / " + fmtLiteral(other, ct);
  StringRef cmp = comparisonOperator(n);
  if (!cmp.empty())
    return (x + " " + cmp + " ").str() + fmtLiteral(other, ct);
  return std::string();
}

/// Two-operand ops.
FailureOr<std::string> binaryExpr(Operation *op, const std::string &a,
                                  const std::string &b, StringRef ct) {
  StringRef n = op->getName().getStringRef();
  double alpha = scalarAttr(op, "alpha", 1.0);
  std::string sb = alpha == 1.0 ? b : fmtLiteral(alpha, ct) + " * " + b;
  if (n == "aten.add.Tensor")
    return a + " + " + sb;
  if (n == "aten.sub.Tensor")
    return a + " - " + sb;
  if (n == "aten.mul.Tensor")
    return a + " * " + b;
  if (n == "aten.div.Tensor")
    return a + " / " + b;
  if (n == "aten.div.Tensor_mode")
    return roundingDivision(op, a, b, ct);
  if (std::optional<std::string> e = integerModulo(n, a, b, ct))
    return *e;
  if (std::optional<std::string> e = tableExpr(n, a, b))
    return *e;
  // NaN propagates, as in ATen.
  if (n == "aten.maximum")
    return a + " > " + b + " || " + a + " != " + a + " ? " + a + " : " + b;
  if (n == "aten.minimum")
    return a + " < " + b + " || " + a + " != " + a + " ? " + a + " : " + b;
  if (n == "aten.bitwise_and.Tensor")
    return a + " & " + b;
  if (n == "aten.pow.Tensor_Tensor")
    return "std::pow(" + a + ", " + b + ")";
  if (n == "aten.bitwise_or.Tensor")
    return a + " | " + b;
  if (n == "aten.bitwise_xor.Tensor")
    return a + " ^ " + b;
  StringRef cmp = comparisonOperator(n);
  if (!cmp.empty())
    return (a + " " + cmp + " ").str() + b;
  return std::string();
}
} // namespace

FailureOr<std::string>
elementwiseExpr(Operation *op, ArrayRef<std::string> args, StringRef ctype) {
  if (args.size() == 1)
    return unaryExpr(op, args[0], ctype);
  if (args.size() == 2)
    return binaryExpr(op, args[0], args[1], ctype);
  return std::string();
}

bool isIntegerDivision(Operation *op) {
  StringRef n = op->getName().getStringRef();
  if (op->getNumResults() != 1)
    return false;
  auto type = op->getResult(0).getType().dyn_cast<ShapedType>();
  if (!type || !type.getElementType().isa<IntegerType>() ||
      type.getElementType().isInteger(1))
    return false;
  return n.startswith("aten.fmod.") || n.startswith("aten.remainder.") ||
         ((n == "aten.div.Tensor_mode" || n == "aten.div.Scalar_mode") &&
          op->getAttr("rounding_mode"));
}

} // namespace codegen
} // namespace dynoc
