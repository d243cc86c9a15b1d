//===- npy.cpp - NumPy .npy files -----------------------------------------===//
#include "dynrt/npy.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string_view>

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

namespace {
/// The value of `key` in a .npy header dict (`{'descr': '<f4', ...}`): the
/// offset of the text after `'key':` and spaces, or npos (also when nothing
/// follows).
size_t findKey(std::string_view header, std::string_view key) {
  std::string quoted = "'" + std::string(key) + "':";
  size_t at = header.find(quoted);
  if (at == std::string_view::npos)
    return at;
  at += quoted.size();
  while (at < header.size() && header[at] == ' ')
    ++at;
  return at < header.size() ? at : std::string_view::npos;
}
} // namespace

bool parseNpy(const uint8_t *bytes, size_t size, const std::string &what,
              NpyArray &out, std::string &error) {
  auto fail = [&](const std::string &why) {
    error = "'" + what + "' " + why;
    return false;
  };
  if (size < 10 || std::memcmp(bytes, "\x93NUMPY", 6) != 0)
    return fail("is not a .npy file");
  int major = bytes[6];
  if (major < 1 || major > 3)
    return fail("has .npy format version " + std::to_string(major) +
                " (1 to 3 are read)");
  size_t lenBytes = major == 1 ? 2 : 4;
  if (size < 8 + lenBytes)
    return fail("is truncated");
  uint64_t headerLen = 0;
  for (size_t i = 0; i < lenBytes; ++i)
    headerLen |= uint64_t(bytes[8 + i]) << (8 * i);
  size_t dataStart = 8 + lenBytes;
  if (headerLen > size - dataStart)
    return fail("is truncated: its header says " + std::to_string(headerLen) +
                " bytes");
  std::string_view header(reinterpret_cast<const char *>(bytes) + dataStart,
                          headerLen);
  dataStart += headerLen;

  size_t at = findKey(header, "descr");
  size_t close = at == std::string_view::npos ? at : header.find('\'', at + 1);
  if (at == std::string_view::npos || header[at] != '\'' ||
      close == std::string_view::npos)
    return fail("has no 'descr' in its header");
  std::string_view descr = header.substr(at + 1, close - at - 1);
  const NpyDType *found = nullptr;
  for (auto &d : kDescr)
    if (descr == d.descr)
      found = &d;
  if (!found)
    return fail("has unsupported dtype '" + std::string(descr) + "'");
  out.dtype = found->dtype;

  at = findKey(header, "fortran_order");
  if (at != std::string_view::npos && header.substr(at, 4) == "True")
    return fail("holds a Fortran-order array (not supported)");

  at = findKey(header, "shape");
  close = at == std::string_view::npos ? at : header.find(')', at);
  if (at == std::string_view::npos || header[at] != '(' ||
      close == std::string_view::npos)
    return fail("has no 'shape' in its header");
  out.shape.clear();
  uint64_t numel = 1;
  bool overflow = false;
  for (size_t i = at + 1; i < close;) {
    char c = header[i];
    if (c == ' ' || c == ',' || c == 'L') {
      ++i;
      continue;
    }
    if (c < '0' || c > '9')
      return fail("has a shape that is not a tuple of sizes");
    uint64_t dim = 0;
    for (; i < close && header[i] >= '0' && header[i] <= '9'; ++i) {
      if (dim > (uint64_t(INT64_MAX) - 9) / 10)
        return fail("has a dim too large");
      dim = dim * 10 + uint64_t(header[i] - '0');
    }
    if (out.shape.size() == kMaxNpyRank)
      return fail("has more than " + std::to_string(kMaxNpyRank) + " dims");
    out.shape.push_back(int64_t(dim));
    if (dim && numel > UINT64_MAX / dim)
      overflow = true;
    numel *= dim;
  }
  uint64_t itemSize = dtypeInfo(out.dtype).itemSize;
  if (overflow || (numel && itemSize > UINT64_MAX / numel))
    return fail("has a shape whose byte size overflows");
  uint64_t nbytes = numel * itemSize;
  if (nbytes > size - dataStart)
    return fail("is truncated: its data is shorter than its shape (" +
                std::to_string(size - dataStart) + " of " +
                std::to_string(nbytes) + " bytes)");
  out.data.assign(bytes + dataStart, bytes + dataStart + nbytes);
  return true;
}

bool readNpy(const std::string &path, NpyArray &out, std::string &error) {
  std::ifstream f(path, std::ios::binary);
  if (!f) {
    error = "cannot open '" + path + "': " + std::strerror(errno);
    return false;
  }
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(f)),
                             std::istreambuf_iterator<char>());
  if (f.bad()) {
    error = "cannot read '" + path + "': " + std::strerror(errno);
    return false;
  }
  return parseNpy(bytes.data(), bytes.size(), path, out, error);
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
