//===- WindowAttrs.cpp - verifying a window op's attributes ---------------===//
#include "dynoc/IR/WindowAttrs.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"

#include <algorithm>

using namespace mlir;

namespace {
/// Larger values overflow the shape arithmetic (dilation * (kernel - 1)).
constexpr int64_t kMaxWindowValue = int64_t(1) << 31;

ArrayRef<int64_t> arrayOf(Operation *op, StringRef name) {
  if (auto a = op->getAttrOfType<DenseI64ArrayAttr>(name))
    return a.asArrayRef();
  return {};
}
} // namespace

LogicalResult dynoc::aten::verifyWindowAttrs(Operation *op) {
  // Each rule: the attribute, the smallest value allowed, ATen's message.
  struct Rule {
    const char *name;
    int64_t min;
    const char *message;
  };
  static const Rule rules[] = {
      {"stride", 1, "non-positive stride is not supported"},
      {"dilation", 1, "dilation should be greater than zero"},
      {"kernel_size", 1, "kernel size should be greater than zero"},
      {"padding", 0, "negative padding is not supported"},
      {"output_padding", 0, "negative output_padding is not supported"},
  };
  for (const Rule &r : rules)
    for (auto [i, v] : llvm::enumerate(arrayOf(op, r.name))) {
      if (v < r.min)
        return op->emitOpError()
               << r.message << " (" << r.name << "[" << i << "] = " << v << ")";
      if (v > kMaxWindowValue)
        return op->emitOpError()
               << r.name << "[" << i << "] = " << v
               << " is out of range (at most " << kMaxWindowValue << ")";
    }
  if (auto groups = op->getAttrOfType<IntegerAttr>("groups")) {
    int64_t g = groups.getInt();
    if (g < 1)
      return op->emitOpError()
             << "non-positive groups is not supported (groups = " << g << ")";
    if (g > kMaxWindowValue)
      return op->emitOpError() << "groups = " << g << " is out of range";
  }
  // Pooling: a pad past half the (dilated) kernel makes windows of padding
  // only.
  if (!op->getName().getStringRef().contains("pool"))
    return success();
  ArrayRef<int64_t> kernel = arrayOf(op, "kernel_size"),
                    padding = arrayOf(op, "padding"),
                    dilation = arrayOf(op, "dilation");
  for (size_t i = 0; !kernel.empty() && i < padding.size(); ++i) {
    int64_t k = kernel[std::min(i, kernel.size() - 1)];
    int64_t d =
        dilation.empty() ? 1 : dilation[std::min(i, dilation.size() - 1)];
    int64_t effective = (k - 1) * d + 1;
    if (padding[i] > effective / 2)
      return op->emitOpError()
             << "pad should be at most half of effective kernel size (padding["
             << i << "] = " << padding[i] << ", effective kernel size "
             << effective << ")";
  }
  return success();
}
