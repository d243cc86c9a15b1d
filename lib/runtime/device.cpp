//===- device.cpp - host memory, or the model's device API ----------------===//
#include "device.h"

#include <cstdlib>
#include <cstring>

namespace dynrt {

std::string Device::name() const {
  return isHost() ? "cpu"
                  : std::string(api_->name) + ":" + std::to_string(ordinal_);
}

dynrt_status_t *Device::failed(const std::string &what, int rc) const {
  const char *why = api_ ? api_->last_error() : nullptr;
  return makeStatus(rc == 202 /* cudaErrorMemoryAllocation */
                        ? DYNRT_RESOURCE_EXHAUSTED
                        : DYNRT_INTERNAL,
                    name() + ": " + what + " failed" +
                        (why && *why ? std::string(": ") + why
                                     : " (code " + std::to_string(rc) + ")"));
}

dynrt_status_t *Device::alloc(size_t bytes, void **out,
                              const std::string &what) const {
  size_t rounded = (bytes + 63) / 64 * 64 + 64;
  if (isHost()) {
    *out = std::aligned_alloc(64, rounded);
    return *out ? nullptr
                : makeStatus(DYNRT_RESOURCE_EXHAUSTED,
                             "cannot allocate " + std::to_string(bytes) +
                                 " bytes for " + what);
  }
  if (int rc = api_->alloc(out, rounded))
    return failed("allocating " + std::to_string(bytes) + " bytes for " + what,
                  rc);
  return nullptr;
}

void Device::release(void *ptr) const {
  if (!ptr)
    return;
  if (isHost())
    std::free(ptr);
  else
    api_->release(ptr);
}

dynrt_status_t *Device::upload(void *dst, const void *src, size_t bytes,
                               void *stream) const {
  if (isHost()) {
    std::memcpy(dst, src, bytes);
    return nullptr;
  }
  if (int rc = api_->copy(dst, src, bytes, DYNOC_COPY_HOST_TO_DEVICE, stream))
    return failed("a host-to-device copy", rc);
  return nullptr;
}

dynrt_status_t *Device::download(void *dst, const void *src,
                                 size_t bytes) const {
  if (isHost()) {
    std::memcpy(dst, src, bytes);
    return nullptr;
  }
  if (int rc = api_->copy(dst, src, bytes, DYNOC_COPY_DEVICE_TO_HOST, nullptr))
    return failed("a device-to-host copy", rc);
  return sync(nullptr);
}

dynrt_status_t *Device::copy(void *dst, const void *src, size_t bytes,
                             void *stream) const {
  if (isHost()) {
    std::memcpy(dst, src, bytes);
    return nullptr;
  }
  if (int rc = api_->copy(dst, src, bytes, DYNOC_COPY_DEVICE_TO_DEVICE, stream))
    return failed("a device copy", rc);
  return nullptr;
}

dynrt_status_t *Device::sync(void *stream) const {
  if (isHost())
    return nullptr;
  if (int rc = api_->sync(stream))
    return failed("synchronizing the stream", rc);
  return nullptr;
}

dynrt_status_t *DeviceBuffer::reserve(size_t bytes, void **out, bool *grown) {
  if (grown)
    *grown = false;
  if (data_ && bytes <= capacity_) {
    *out = data_;
    return nullptr;
  }
  reset();
  if (dynrt_status_t *s = device_->alloc(bytes, &data_, "a workspace"))
    return s;
  capacity_ = bytes;
  if (grown)
    *grown = true;
  *out = data_;
  return nullptr;
}

void DeviceBuffer::reset() {
  if (data_ && device_ && owned_)
    device_->release(data_);
  data_ = nullptr;
  capacity_ = 0;
  owned_ = true;
}

void DeviceBuffer::adopt(void *external, size_t bytes) {
  reset();
  data_ = external;
  capacity_ = bytes;
  owned_ = false;
}

} // namespace dynrt
