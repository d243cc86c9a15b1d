//===- safetensors.h - reading and writing safetensors files ----*- C++ -*-===//
//
// https://github.com/huggingface/safetensors: an 8-byte little-endian header
// length, a JSON header {name: {dtype, shape, data_offsets}}, then the bytes.
//
//===----------------------------------------------------------------------===//
#ifndef DYNRT_SAFETENSORS_H
#define DYNRT_SAFETENSORS_H

#include "dynrt/dtype.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace dynrt {

struct TensorView {
  DType dtype;
  std::vector<int64_t> shape;
  const uint8_t *data = nullptr;
  size_t nbytes = 0;
};

/// A memory-mapped safetensors file. Immutable; safe to read from many threads.
class SafetensorsFile {
public:
  /// The reference reader's cap on a header's size.
  static constexpr uint64_t kMaxHeaderBytes = 100'000'000;

  /// Maps and validates `path` with the reference reader's checks (the header
  /// a JSON object under the cap; each tensor's bytes what its dtype and
  /// shape need, without overflow; the tensors tiling the data in order, no
  /// overlap, no gap). On failure returns null and sets `error` to one line
  /// naming the file and what is wrong with it.
  static std::unique_ptr<SafetensorsFile> open(const std::string &path,
                                               std::string &error);
  /// Reads safetensors bytes that live elsewhere (weights linked into a model
  /// .so); `bytes` must outlive the result. `what` names them in errors.
  static std::unique_ptr<SafetensorsFile> fromMemory(const uint8_t *bytes,
                                                     size_t size,
                                                     const std::string &what,
                                                     std::string &error);
  ~SafetensorsFile();

  const std::map<std::string, TensorView> &tensors() const { return tensors_; }
  /// The whole file's bytes (header included), for its digest.
  const uint8_t *bytes() const { return bytes_; }
  size_t size() const { return size_; }
  const TensorView *find(const std::string &name) const;

private:
  SafetensorsFile() = default;
  bool parse(const uint8_t *bytes, size_t size, const std::string &what,
             std::string &error);
  bool checkLayout(size_t dataSize, const std::string &what,
                   std::string &error) const;
  const uint8_t *dataStart() const { return dataStart_; }
  const uint8_t *dataStart_ = nullptr;
  const uint8_t *bytes_ = nullptr;
  void *map_ = nullptr;
  size_t size_ = 0;
  std::map<std::string, TensorView> tensors_;
};

/// Writes `tensors` to `path` (through a temporary file renamed into place, so
/// an existing file is never left half-written). Returns false and sets
/// `error`.
bool writeSafetensors(const std::string &path,
                      const std::map<std::string, TensorView> &tensors,
                      std::string &error);

} // namespace dynrt

#endif // DYNRT_SAFETENSORS_H
