//===- Dims.h - tensor dims as generated code spells them -------*- C++ -*-===//
//
// Target-neutral: a dim is a literal known at build time or a C expression
// over the input shapes (`in[i][d]`) and the graph's resolved values (`p[k]`),
// the same text in the CPU and the CUDA printers' host code.
//
//===----------------------------------------------------------------------===//
#ifndef DYNOC_CODEGEN_DIMS_H
#define DYNOC_CODEGEN_DIMS_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLExtras.h"

#include <cctype>
#include <cstdint>
#include <string>
#include <vector>

namespace dynoc {
namespace codegen {

using DimList = std::vector<std::string>;

inline bool isLiteral(const std::string &d) {
  return !d.empty() && llvm::all_of(d, [](char c) { return isdigit(c); });
}

/// Product of dims with the literal factors folded.
inline std::string product(llvm::ArrayRef<std::string> dims) {
  int64_t lit = 1;
  std::string dyn;
  for (const std::string &d : dims) {
    if (isLiteral(d))
      lit *= std::stoll(d);
    else
      dyn += (dyn.empty() ? "" : " * ") + d;
  }
  if (dyn.empty() || lit == 0)
    return std::to_string(lit);
  return lit == 1 ? "(" + dyn + ")"
                  : "(" + std::to_string(lit) + " * " + dyn + ")";
}

/// `{a, b, c}`; `{0}` for no entries (a C array needs one).
inline std::string braceList(llvm::ArrayRef<std::string> v) {
  std::string s = "{";
  for (size_t i = 0; i < v.size(); ++i)
    s += (i ? ", " : "") + v[i];
  return (v.empty() ? std::string("{0") : s) + "}";
}

/// Element strides of a dense tensor of dims `in` read as if broadcast to
/// `out` (aligned from the right): 0 on the dims it is broadcast along; a
/// dynamic dim is tested at run time (it may be 1).
inline DimList broadcastStrideList(const DimList &in, const DimList &out) {
  DimList strides(out.size(), "0");
  DimList inner; // the dims after the current one
  for (int i = int(in.size()) - 1, o = int(out.size()) - 1; i >= 0; --i, --o) {
    std::string s = product(inner);
    if (in[i] == "1")
      strides[o] = out[o] == "1" ? s : "0";
    else if (!isLiteral(in[i]))
      strides[o] = "(" + in[i] + " == 1 ? 0 : " + s + ")";
    else
      strides[o] = s;
    inner.push_back(in[i]);
  }
  return strides;
}

} // namespace codegen
} // namespace dynoc

#endif // DYNOC_CODEGEN_DIMS_H
