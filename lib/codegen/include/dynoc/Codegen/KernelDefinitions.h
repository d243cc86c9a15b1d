//===- KernelDefinitions.h - file-scope kernels, each printed once -*- C++
//-*-===//
//
// A target that prints a loop as a kernel of its own (CUDA's __global__
// functions) puts the definition here rather than at the call. Identical
// definitions, as a model's repeated layers give, get one name: the compiler
// sees each kernel once, which is most of a CUDA build's time.
//
//===----------------------------------------------------------------------===//
#ifndef DYNOC_CODEGEN_KERNELDEFINITIONS_H
#define DYNOC_CODEGEN_KERNELDEFINITIONS_H

#include "llvm/ADT/StringRef.h"

#include <map>
#include <string>

namespace dynoc {
namespace codegen {

class KernelDefinitions {
public:
  /// The placeholder a definition spells its own name with.
  static constexpr llvm::StringLiteral kName = "$KERNEL";

  /// The name of `definition` (text with kName where its name goes): a new
  /// one, `prefix` and a number, when no identical definition was added.
  std::string define(llvm::StringRef prefix, const std::string &definition) {
    auto [it, added] = names.try_emplace(definition, "");
    if (!added)
      return it->second;
    it->second = prefix.str() + std::to_string(names.size() - 1);
    std::string text = definition;
    for (size_t at = text.find(kName.data()); at != std::string::npos;
         at = text.find(kName.data(), at + it->second.size()))
      text.replace(at, kName.size(), it->second);
    all += text;
    return it->second;
  }
  /// Every definition, in the order added.
  const std::string &text() const { return all; }
  size_t size() const { return names.size(); }

private:
  std::map<std::string, std::string> names; // definition -> its name
  std::string all;
};

} // namespace codegen
} // namespace dynoc

#endif // DYNOC_CODEGEN_KERNELDEFINITIONS_H
