//===- dtype.cpp - element types the runtime knows ------------------------===//
#include "dynrt/dtype.h"

namespace dynrt {
namespace {
// DLPack 0.8 added kDLBool (6); Debian ships an older header.
constexpr uint8_t kDLBoolCode = 6;
constexpr DTypeInfo kTable[] = {
    {DType::F32, "float32", "F32", 4, {kDLFloat, 32, 1}},
    {DType::F64, "float64", "F64", 8, {kDLFloat, 64, 1}},
    {DType::F16, "float16", "F16", 2, {kDLFloat, 16, 1}},
    {DType::BF16, "bfloat16", "BF16", 2, {kDLBfloat, 16, 1}},
    {DType::I64, "int64", "I64", 8, {kDLInt, 64, 1}},
    {DType::I32, "int32", "I32", 4, {kDLInt, 32, 1}},
    {DType::I16, "int16", "I16", 2, {kDLInt, 16, 1}},
    {DType::I8, "int8", "I8", 1, {kDLInt, 8, 1}},
    {DType::U8, "uint8", "U8", 1, {kDLUInt, 8, 1}},
    {DType::Bool, "bool", "BOOL", 1, {kDLBoolCode, 8, 1}},
};
} // namespace

const DTypeInfo &dtypeInfo(DType dtype) {
  return kTable[static_cast<int>(dtype)];
}

std::optional<DType> dtypeFromTorchName(std::string_view name) {
  for (const auto &info : kTable)
    if (info.torchName == name)
      return info.dtype;
  return std::nullopt;
}

std::optional<DType> dtypeFromSafetensorsName(std::string_view name) {
  for (const auto &info : kTable)
    if (info.safetensorsName == name)
      return info.dtype;
  return std::nullopt;
}

std::optional<DType> dtypeFromDLPack(DLDataType dl) {
  for (const auto &info : kTable)
    if (info.dl.code == dl.code && info.dl.bits == dl.bits && dl.lanes == 1)
      return info.dtype;
  // Some producers tag bool as uint8.
  return std::nullopt;
}

} // namespace dynrt
