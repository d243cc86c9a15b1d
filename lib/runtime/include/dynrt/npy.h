//===- npy.h - NumPy .npy files for tools and examples ----------*- C++ -*-===//
#ifndef DYNRT_NPY_H
#define DYNRT_NPY_H

#include "dynrt/dtype.h"

#include <dlpack/dlpack.h>

#include <cstdint>
#include <string>
#include <vector>

namespace dynrt {

/// A dense, row-major array read from or written to a .npy file.
struct NpyArray {
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;

  /// A DLTensor viewing this array (valid while the array lives, unmoved).
  DLTensor view();
  size_t numel() const;
};

/// The highest rank a .npy file may have here.
inline constexpr size_t kMaxNpyRank = 32;

/// Reads a little-endian, C-order .npy (format 1.0-3.0). Returns false and sets
/// `error` (naming the file) on any problem.
bool readNpy(const std::string &path, NpyArray &out, std::string &error);
/// The same, for the .npy bytes `bytes[0, size)`; `what` names them in errors.
/// Sizes are checked against the bytes before anything is allocated.
bool parseNpy(const uint8_t *bytes, size_t size, const std::string &what,
              NpyArray &out, std::string &error);
/// Writes `t` (dense, CPU) as a .npy file.
bool writeNpy(const std::string &path, const DLTensor &t, std::string &error);

} // namespace dynrt

#endif // DYNRT_NPY_H
