//===- tensors.cpp - tensors on a model's device: alloc, copy, wait -------===//
//
// dynrt_model_alloc_tensor, dynrt_model_copy_tensor and
// dynrt_context_synchronize (dynrt.h), through the model's Device: host
// memory, or the device API its .so exports.
//
//===----------------------------------------------------------------------===//
#include "dynrt/dtype.h"
#include "guards.h"
#include "model_internal.h"
#include "status.h"

#include <cstring>

namespace {
using dynrt::makeStatus;

/// Where a caller's tensor lives for `device`: -1 host, 1 the device, 0
/// neither (another device).
int placeOf(const dynrt::Device &device, const DLTensor &t) {
  if (t.device.device_type == kDLCPU || t.device.device_type == kDLCUDAHost)
    return -1;
  DLDevice d = device.dl();
  return !device.isHost() && t.device.device_type == d.device_type &&
                 t.device.device_id == d.device_id
             ? 1
             : 0;
}

dynrt_status_t *copyTensor(dynrt_model_t *m, const DLTensor *src,
                           const DLTensor *dst) {
  if (!m || !src || !dst)
    return makeStatus(DYNRT_INVALID_ARGUMENT,
                      "dynrt_model_copy_tensor: null argument");
  bool same = src->ndim == dst->ndim && src->dtype.code == dst->dtype.code &&
              src->dtype.bits == dst->dtype.bits &&
              src->dtype.lanes == dst->dtype.lanes;
  size_t bytes = (size_t(src->dtype.bits) * src->dtype.lanes + 7) / 8;
  for (int d = 0; same && d < src->ndim; ++d) {
    same = src->shape[d] == dst->shape[d];
    bytes *= size_t(src->shape[d]);
  }
  if (!same)
    return makeStatus(DYNRT_INVALID_ARGUMENT,
                      "dynrt_model_copy_tensor: the tensors differ in dtype "
                      "or shape");
  if (!dynrt::isContiguous(*src) || !dynrt::isContiguous(*dst))
    return makeStatus(DYNRT_INVALID_ARGUMENT,
                      "dynrt_model_copy_tensor: the tensors must be "
                      "contiguous");
  int from = placeOf(m->device, *src), to = placeOf(m->device, *dst);
  if (!from || !to)
    return makeStatus(DYNRT_INVALID_ARGUMENT,
                      "dynrt_model_copy_tensor: a tensor is neither in host "
                      "memory nor on " +
                          m->device.name());
  if (bytes == 0)
    return nullptr;
  const void *s = static_cast<const char *>(src->data) + src->byte_offset;
  void *d = static_cast<char *>(dst->data) + dst->byte_offset;
  if (from < 0 && to < 0) {
    std::memcpy(d, s, bytes);
    return nullptr;
  }
  if (from > 0 && to < 0)
    return m->device.download(d, s, bytes);
  dynrt_status_t *st = from < 0 ? m->device.upload(d, s, bytes, nullptr)
                                : m->device.copy(d, s, bytes, nullptr);
  return st ? st : m->device.sync(nullptr);
}
} // namespace

extern "C" dynrt_status_t *
dynrt_model_alloc_tensor(dynrt_model_t *model, DLDataType dtype, int32_t ndim,
                         const int64_t *shape, DLManagedTensor **out) {
  return dynrt::guarded("dynrt_model_alloc_tensor", [&]() -> dynrt_status_t * {
    if (!model || !out || ndim < 0 || (ndim > 0 && !shape))
      return makeStatus(DYNRT_INVALID_ARGUMENT,
                        "dynrt_model_alloc_tensor: null argument");
    *out = nullptr;
    auto type = dynrt::dtypeFromDLPack(dtype);
    if (!type)
      return makeStatus(
          DYNRT_INVALID_ARGUMENT,
          "dynrt_model_alloc_tensor: unknown DLPack dtype (code " +
              std::to_string(dtype.code) + ", " + std::to_string(dtype.bits) +
              " bits)");
    if (size_t(ndim) > dynrt::kMaxRank)
      return makeStatus(DYNRT_INVALID_ARGUMENT,
                        "dynrt_model_alloc_tensor: rank " +
                            std::to_string(ndim) + " is over " +
                            std::to_string(dynrt::kMaxRank));
    dynrt::TensorSpec spec;
    spec.dtype = *type;
    spec.shape.assign(shape, shape + ndim);
    for (int64_t d : spec.shape)
      if (d < 0)
        return makeStatus(DYNRT_INVALID_ARGUMENT,
                          "dynrt_model_alloc_tensor: negative dim");
    return dynrt::allocOutput(model->device, spec, spec.shape.data(), 0, out);
  });
}

extern "C" dynrt_status_t *dynrt_model_copy_tensor(dynrt_model_t *model,
                                                   const DLTensor *src,
                                                   const DLTensor *dst) {
  return dynrt::guarded("dynrt_model_copy_tensor",
                        [&] { return copyTensor(model, src, dst); });
}

extern "C" dynrt_status_t *dynrt_context_synchronize(dynrt_context_t *context) {
  return dynrt::guarded("dynrt_context_synchronize", [&]() -> dynrt_status_t * {
    if (!context)
      return makeStatus(DYNRT_INVALID_ARGUMENT,
                        "dynrt_context_synchronize: null argument");
    return context->model->device.sync(context->stream);
  });
}
