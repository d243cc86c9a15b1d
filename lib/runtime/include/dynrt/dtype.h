//===- dtype.h - element types the runtime knows ----------------*- C++ -*-===//
#ifndef DYNRT_DTYPE_H
#define DYNRT_DTYPE_H

#include <dlpack/dlpack.h>

#include <cstddef>
#include <optional>
#include <string_view>

namespace dynrt {

enum class DType { F32, F64, F16, BF16, I64, I32, I16, I8, U8, Bool };

struct DTypeInfo {
  DType dtype;
  std::string_view torchName;       // "float32", as the manifest spells it
  std::string_view safetensorsName; // "F32"
  size_t itemSize;
  DLDataType dl;
};

const DTypeInfo &dtypeInfo(DType dtype);
std::optional<DType> dtypeFromTorchName(std::string_view name);
std::optional<DType> dtypeFromSafetensorsName(std::string_view name);
std::optional<DType> dtypeFromDLPack(DLDataType dl);

} // namespace dynrt

#endif // DYNRT_DTYPE_H
