//===- npy.cpp - NumPy .npy files -----------------------------------------===//
#include "dynrt/npy.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <regex>

namespace dynrt {
namespace {
struct NpyDType {
  const char *descr;
  DType dtype;
};
constexpr NpyDType kDescr[] = {
    {"<f4", DType::F32}, {"<f8", DType::F64}, {"<f2", DType::F16},
    {"<i8", DType::I64}, {"<i4", DType::I32}, {"<i2", DType::I16},
    {"|i1", DType::I8},  {"|u1", DType::U8},  {"|b1", DType::Bool},
};
} // namespace

size_t NpyArray::numel() const {
  size_t n = 1;
  for (int64_t d : shape)
    n *= static_cast<size_t>(d);
  return n;
}

DLTensor NpyArray::view() {
  return DLTensor{data.data(),
                  {kDLCPU, 0},
                  (int32_t)shape.size(),
                  dtypeInfo(dtype).dl,
                  shape.data(),
                  nullptr,
                  0};
}

bool readNpy(const std::string &path, NpyArray &out, std::string &error) {
  std::ifstream f(path, std::ios::binary);
  if (!f) {
    error = "cannot open '" + path + "': " + std::strerror(errno);
    return false;
  }
  char magic[8];
  if (!f.read(magic, 8) || std::memcmp(magic, "\x93NUMPY", 6) != 0) {
    error = "'" + path + "' is not a .npy file";
    return false;
  }
  uint32_t headerLen = 0;
  unsigned char len[4] = {0, 0, 0, 0};
  int lenBytes = magic[6] == 1 ? 2 : 4;
  f.read(reinterpret_cast<char *>(len), lenBytes);
  headerLen =
      len[0] | (len[1] << 8) | (len[2] << 16) | (uint32_t(len[3]) << 24);
  std::string header(headerLen, '\0');
  if (!f.read(header.data(), headerLen)) {
    error = "'" + path + "' is truncated";
    return false;
  }
  std::smatch m;
  if (!std::regex_search(header, m, std::regex("'descr':\\s*'([^']+)'"))) {
    error = "'" + path + "': header has no descr";
    return false;
  }
  std::string descr = m[1];
  bool found = false;
  for (auto &d : kDescr)
    if (descr == d.descr)
      out.dtype = d.dtype, found = true;
  if (!found) {
    error = "'" + path + "': unsupported dtype '" + descr + "'";
    return false;
  }
  if (std::regex_search(header, m, std::regex("'fortran_order':\\s*True"))) {
    error = "'" + path + "': Fortran-order arrays are not supported";
    return false;
  }
  if (!std::regex_search(header, m, std::regex("'shape':\\s*\\(([^)]*)\\)"))) {
    error = "'" + path + "': header has no shape";
    return false;
  }
  std::string dims = m[1];
  out.shape.clear();
  std::regex num("\\d+");
  for (auto it = std::sregex_iterator(dims.begin(), dims.end(), num);
       it != std::sregex_iterator(); ++it)
    out.shape.push_back(std::stoll(it->str()));
  out.data.resize(out.numel() * dtypeInfo(out.dtype).itemSize);
  if (!f.read(reinterpret_cast<char *>(out.data.data()), out.data.size())) {
    error = "'" + path + "' is truncated: its data is shorter than its shape";
    return false;
  }
  return true;
}

bool writeNpy(const std::string &path, const DLTensor &t, std::string &error) {
  auto dtype = dtypeFromDLPack(t.dtype);
  const char *descr = nullptr;
  for (auto &d : kDescr)
    if (dtype && d.dtype == *dtype)
      descr = d.descr;
  if (!descr) {
    error = "cannot write '" + path + "': unsupported dtype";
    return false;
  }
  std::string shape = "(";
  size_t numel = 1;
  for (int i = 0; i < t.ndim; ++i) {
    shape += std::to_string(t.shape[i]) + (t.ndim == 1      ? ","
                                           : i + 1 < t.ndim ? ", "
                                                            : "");
    numel *= static_cast<size_t>(t.shape[i]);
  }
  shape += ")";
  std::string header = std::string("{'descr': '") + descr +
                       "', 'fortran_order': False, 'shape': " + shape + ", }";
  while ((10 + header.size() + 1) % 64)
    header.push_back(' ');
  header.push_back('\n');
  std::ofstream f(path, std::ios::binary);
  if (!f) {
    error = "cannot write '" + path + "': " + std::strerror(errno);
    return false;
  }
  f.write("\x93NUMPY\x01\x00", 8);
  uint16_t len = static_cast<uint16_t>(header.size());
  f.put(char(len & 0xff)).put(char(len >> 8));
  f << header;
  f.write(static_cast<const char *>(t.data) + t.byte_offset,
          numel * dtypeInfo(*dtype).itemSize);
  if (!f) {
    error = "cannot write '" + path + "'";
    return false;
  }
  return true;
}

} // namespace dynrt
