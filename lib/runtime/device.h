//===- device.h - where a model's tensors live (internal) -------*- C++ -*-===//
//
// Host memory for CPU models; for device models, the memory, copies and CUDA
// graphs of the device API the model .so exports (model_abi.h), so libdynrt
// links no device library. Every failure is a status naming what failed.
//
//===----------------------------------------------------------------------===//
#ifndef DYNRT_DEVICE_H
#define DYNRT_DEVICE_H

#include "dynrt/model_abi.h"
#include "status.h"

#include <dlpack/dlpack.h>

#include <cstddef>
#include <string>

namespace dynrt {

class Device {
public:
  Device() = default;
  Device(const dynoc_device_api *api, int ordinal)
      : api_(api), ordinal_(ordinal) {}
  bool isHost() const { return api_ == nullptr; }
  DLDevice dl() const {
    return isHost() ? DLDevice{kDLCPU, 0} : DLDevice{kDLCUDA, ordinal_};
  }
  /// "cpu" or "cuda:0".
  std::string name() const;
  const dynoc_device_api *api() const { return api_; }

  /// 64-byte aligned memory of `bytes` (at least one byte).
  dynrt_status_t *alloc(size_t bytes, void **out,
                        const std::string &what) const;
  void release(void *ptr) const;
  /// Host -> this device (a plain copy on the host).
  dynrt_status_t *upload(void *dst, const void *src, size_t bytes,
                         void *stream) const;
  /// This device -> host (a plain copy on the host); waits for the copy.
  dynrt_status_t *download(void *dst, const void *src, size_t bytes) const;
  /// Within this device's memory.
  dynrt_status_t *copy(void *dst, const void *src, size_t bytes,
                       void *stream) const;
  dynrt_status_t *sync(void *stream) const;
  /// A status for a device API call that returned `rc`.
  dynrt_status_t *failed(const std::string &what, int rc) const;

private:
  const dynoc_device_api *api_ = nullptr;
  int ordinal_ = 0;
};

/// Memory of one device that grows on demand (its old contents are not
/// kept).
class DeviceBuffer {
public:
  explicit DeviceBuffer(const Device *device = nullptr) : device_(device) {}
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;
  ~DeviceBuffer() { reset(); }
  void setDevice(const Device *device) {
    reset();
    device_ = device;
  }
  /// At least `bytes`; `grown` says whether the memory moved.
  dynrt_status_t *reserve(size_t bytes, void **out, bool *grown = nullptr);
  void *data() const { return data_; }
  void reset();
  /// Makes this buffer `external` memory of the caller's, `bytes` long, which
  /// it never frees (a weight bound with dynrt_model_bind_weight).
  void adopt(void *external, size_t bytes);

private:
  const Device *device_;
  void *data_ = nullptr;
  size_t capacity_ = 0;
  bool owned_ = true;
};

} // namespace dynrt

#endif // DYNRT_DEVICE_H
