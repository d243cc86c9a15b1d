//===- weights.cpp - a model's weights: read, write, checkpoint -----------===//
//
// The C API a training loop needs around a step model: the parameters,
// optimizer state and learning rates a model's graphs read, by their manifest
// names; their current values (the model's own copies once a graph or the
// caller changed them, the weights file's otherwise); writes; and safetensors
// checkpoints of all of them (docs/training.md, docs/runtime.md); and the
// check of a weights sidecar against the digest its build recorded.
//
//===----------------------------------------------------------------------===//
#include "dynrt/digest.h"
#include "model_internal.h"
#include "status.h"

#include <cstdlib>
#include <cstring>
#include <set>

namespace {
using dynrt::guarded;
using dynrt::makeStatus;

/// The weights of `m`: each non-user, non-prepared input of its graphs and
/// of their prepare functions, once, in the order first read.
std::vector<const dynrt::TensorSpec *> weightsOf(const dynrt_model_t &m) {
  std::vector<const dynrt::TensorSpec *> out;
  std::set<std::string> seen;
  auto add = [&](const dynrt::GraphSpec &g) {
    for (size_t i = g.numUserInputs; i < g.inputs.size(); ++i)
      if (g.inputs[i].kind != "prepared" &&
          seen.insert(g.inputs[i].name).second)
        out.push_back(&g.inputs[i]);
  };
  for (const dynrt::GraphSpec &g : m.manifest.graphs) {
    add(g);
    for (const dynrt::GraphSpec &p : g.prepare)
      add(p);
  }
  return out;
}

dynrt_status_t *findWeight(const dynrt_model_t &m, const char *name,
                           const dynrt::TensorSpec **out) {
  for (const dynrt::TensorSpec *w : weightsOf(m))
    if (w->name == name) {
      *out = w;
      return nullptr;
    }
  return makeStatus(DYNRT_NOT_FOUND, "model '" + m.path +
                                         "' has no weight named '" + name +
                                         "' (dynrt_model_weight_name lists "
                                         "them)");
}

/// Where weight `w`'s current value lives: the model's copy (device memory
/// for a device model) or the weights file (host memory).
const void *currentData(const dynrt_model_t &m, const dynrt::TensorSpec &w,
                        bool *onDevice) {
  auto it = m.state.find(w.name);
  *onDevice = it != m.state.end() && !m.device.isHost();
  if (it != m.state.end())
    return it->second->data();
  const dynrt::TensorView *file = m.weights ? m.weights->find(w.name) : nullptr;
  return file ? file->data : nullptr;
}

dynrt_status_t *readWeight(dynrt_model_t *m, const char *name,
                           DLManagedTensor **out) {
  if (!m || !name || !out)
    return makeStatus(DYNRT_INVALID_ARGUMENT,
                      "dynrt_model_read_weight: null argument");
  *out = nullptr;
  const dynrt::TensorSpec *w;
  if (dynrt_status_t *s = findWeight(*m, name, &w))
    return s;
  std::lock_guard<std::mutex> lock(m->stateMutex);
  bool onDevice;
  const void *src = currentData(*m, *w, &onDevice);
  if (!src)
    return makeStatus(DYNRT_DATA_LOSS, "weights of model '" + m->path +
                                           "' lack tensor '" + w->name + "'");
  DLManagedTensor *t;
  if (dynrt_status_t *s =
          dynrt::allocOutput(m->device, *w, w->shape.data(), 0, &t))
    return s;
  size_t bytes = dynrt::byteSize(*w);
  dynrt_status_t *s =
      onDevice ? m->device.copy(t->dl_tensor.data, src, bytes, nullptr)
               : m->device.upload(t->dl_tensor.data, src, bytes, nullptr);
  if (!s)
    s = m->device.sync(nullptr);
  if (s) {
    dynrt::deleteManaged(t);
    return s;
  }
  *out = t;
  return nullptr;
}

/// Checks that `v` can be weight `w`'s new value: its dtype and shape,
/// contiguous, on the host or the model's device.
dynrt_status_t *checkValue(const dynrt_model_t &m, const dynrt::TensorSpec &w,
                           const DLTensor *v) {
  std::string where = "weight '" + w.name + "'";
  if (!v || (!v->data && dynrt::byteSize(w) != 0))
    return makeStatus(DYNRT_INVALID_ARGUMENT, where + ": the value is null");
  auto dtype = dynrt::dtypeFromDLPack(v->dtype);
  if (!dtype || *dtype != w.dtype)
    return makeStatus(DYNRT_INVALID_ARGUMENT,
                      where + " is " +
                          std::string(dynrt::dtypeInfo(w.dtype).torchName) +
                          "; the value has another dtype");
  std::vector<int64_t> shape(v->shape, v->shape + v->ndim);
  auto text = [](const std::vector<int64_t> &s) {
    std::string t = "[";
    for (size_t i = 0; i < s.size(); ++i)
      t += (i ? ", " : "") + std::to_string(s[i]);
    return t + "]";
  };
  if (shape != w.shape)
    return makeStatus(DYNRT_INVALID_ARGUMENT,
                      where + " has shape " + text(w.shape) +
                          "; the value has " + text(shape));
  if (v->strides) {
    int64_t expected = 1;
    for (int d = v->ndim - 1; d >= 0; --d) {
      if (v->shape[d] != 1 && v->strides[d] != expected)
        return makeStatus(DYNRT_INVALID_ARGUMENT,
                          where + ": the value is not contiguous");
      expected *= v->shape[d];
    }
  }
  bool host =
      v->device.device_type == kDLCPU || v->device.device_type == kDLCUDAHost;
  if (!host && (m.device.isHost() ||
                v->device.device_type != m.device.dl().device_type ||
                v->device.device_id != m.device.dl().device_id))
    return makeStatus(DYNRT_INVALID_ARGUMENT,
                      where +
                          ": the value is on another device than the "
                          "model (" +
                          m.device.name() + ")");
  return nullptr;
}

/// Writes `v` (checked) over weight `w`, under the state mutex.
dynrt_status_t *store(dynrt_model_t &m, const dynrt::TensorSpec &w,
                      const DLTensor *v) {
  const dynrt::TensorView *file = m.weights ? m.weights->find(w.name) : nullptr;
  if (!file)
    return makeStatus(DYNRT_DATA_LOSS, "weights of model '" + m.path +
                                           "' lack tensor '" + w.name + "'");
  size_t bytes = dynrt::byteSize(w);
  void *dst;
  if (dynrt_status_t *s = dynrt::stateCopy(m, w.name, *file, bytes, &dst))
    return s;
  const void *src = static_cast<const char *>(v->data) + v->byte_offset;
  bool host =
      v->device.device_type == kDLCPU || v->device.device_type == kDLCUDAHost;
  dynrt_status_t *s = host ? m.device.upload(dst, src, bytes, nullptr)
                           : m.device.copy(dst, src, bytes, nullptr);
  if (!s)
    s = m.device.sync(nullptr);
  if (!s && m.weightChanged)
    m.weightChanged(dst);
  return s ? s : dynrt::reprepare(m, w.name);
}

dynrt_status_t *writeWeight(dynrt_model_t *m, const char *name,
                            const DLTensor *value) {
  if (!m || !name)
    return makeStatus(DYNRT_INVALID_ARGUMENT,
                      "dynrt_model_write_weight: null argument");
  const dynrt::TensorSpec *w;
  if (dynrt_status_t *s = findWeight(*m, name, &w))
    return s;
  if (dynrt_status_t *s = checkValue(*m, *w, value))
    return s;
  std::lock_guard<std::mutex> lock(m->stateMutex);
  return store(*m, *w, value);
}

/// Makes the model read and write weight `name` in `value`'s memory: the
/// model's copy of it becomes that memory (not freed by the model), and every
/// variant that reads it or writes it back is pointed there.
dynrt_status_t *bindWeight(dynrt_model_t *m, const char *name,
                           const DLTensor *value) {
  if (!m || !name)
    return makeStatus(DYNRT_INVALID_ARGUMENT,
                      "dynrt_model_bind_weight: null argument");
  const dynrt::TensorSpec *w;
  if (dynrt_status_t *s = findWeight(*m, name, &w))
    return s;
  if (dynrt_status_t *s = checkValue(*m, *w, value))
    return s;
  bool host = value->device.device_type == kDLCPU ||
              value->device.device_type == kDLCUDAHost;
  if (host != m->device.isHost())
    return makeStatus(DYNRT_INVALID_ARGUMENT,
                      std::string("weight '") + name +
                          "': bound memory must be on the model's device (" +
                          m->device.name() + ")");
  void *data = static_cast<char *>(value->data) + value->byte_offset;
  size_t bytes = dynrt::byteSize(*w);
  std::lock_guard<std::mutex> lock(m->stateMutex);
  auto &slot = m->state[w->name];
  void *old = slot ? slot->data() : nullptr;
  if (!slot)
    slot = std::make_unique<dynrt::DeviceBuffer>(&m->device);
  if (old != data)
    slot->adopt(data, bytes);
  for (dynrt::Variant &v : m->variants) {
    const dynrt::GraphSpec &g = *v.spec;
    for (size_t i = g.numUserInputs; i < g.inputs.size(); ++i)
      if (g.inputs[i].kind != "prepared" && g.inputs[i].name == w->name) {
        v.weightPtrs[i - g.numUserInputs] = data;
        v.stateMutex = &m->stateMutex;
      }
    for (dynrt::Variant::WriteBack &wb : v.writeBacks)
      if (old && wb.state == old)
        wb.state = data;
  }
  if (m->weightChanged)
    m->weightChanged(data);
  return dynrt::reprepare(*m, w->name);
}

dynrt_status_t *saveWeights(dynrt_model_t *m, const char *path) {
  if (!m || !path)
    return makeStatus(DYNRT_INVALID_ARGUMENT,
                      "dynrt_model_save_weights: null argument");
  std::lock_guard<std::mutex> lock(m->stateMutex);
  std::map<std::string, dynrt::TensorView> tensors;
  std::vector<std::vector<uint8_t>> downloaded;
  for (const dynrt::TensorSpec *w : weightsOf(*m)) {
    bool onDevice;
    const void *src = currentData(*m, *w, &onDevice);
    if (!src)
      return makeStatus(DYNRT_DATA_LOSS, "weights of model '" + m->path +
                                             "' lack tensor '" + w->name + "'");
    size_t bytes = dynrt::byteSize(*w);
    if (onDevice) {
      downloaded.emplace_back(bytes);
      if (dynrt_status_t *s =
              m->device.download(downloaded.back().data(), src, bytes))
        return s;
      src = downloaded.back().data();
    }
    tensors[w->name] = dynrt::TensorView{
        w->dtype, w->shape, static_cast<const uint8_t *>(src), bytes};
  }
  std::string error;
  if (!dynrt::writeSafetensors(path, tensors, error))
    return makeStatus(DYNRT_NOT_FOUND, error);
  return nullptr;
}

dynrt_status_t *loadWeights(dynrt_model_t *m, const char *path) {
  if (!m || !path)
    return makeStatus(DYNRT_INVALID_ARGUMENT,
                      "dynrt_model_load_weights: null argument");
  std::string error;
  auto file = dynrt::SafetensorsFile::open(path, error);
  if (!file)
    return makeStatus(error.find("does not exist") != std::string::npos
                          ? DYNRT_NOT_FOUND
                          : DYNRT_DATA_LOSS,
                      error);
  // All of it is checked before anything is written.
  std::vector<std::pair<const dynrt::TensorSpec *, DLTensor>> values;
  for (const auto &[name, view] : file->tensors()) {
    const dynrt::TensorSpec *w;
    if (dynrt_status_t *s = findWeight(*m, name.c_str(), &w)) {
      dynrt_status_free(s);
      return makeStatus(DYNRT_INVALID_ARGUMENT,
                        std::string("checkpoint '") + path + "' holds '" +
                            name + "', which is no weight of model '" +
                            m->path + "'");
    }
    DLTensor t{const_cast<uint8_t *>(view.data),
               DLDevice{kDLCPU, 0},
               int32_t(view.shape.size()),
               dynrt::dtypeInfo(view.dtype).dl,
               const_cast<int64_t *>(view.shape.data()),
               nullptr,
               0};
    if (dynrt_status_t *s = checkValue(*m, *w, &t)) {
      std::string why = dynrt_status_message(s);
      dynrt_status_free(s);
      return makeStatus(DYNRT_INVALID_ARGUMENT,
                        std::string("checkpoint '") + path + "': " + why);
    }
    values.push_back({w, t});
  }
  std::lock_guard<std::mutex> lock(m->stateMutex);
  for (auto &[w, t] : values)
    if (dynrt_status_t *s = store(*m, *w, &t))
      return s;
  return nullptr;
}

} // namespace

dynrt_status_t *dynrt::checkSidecarDigest(const dynrt_model_t &m,
                                          const std::string &path) {
  // The file the build wrote, byte for byte: one changed or replaced since
  // (another build's, a half-copied one) is refused by name.
  if (m.manifest.weightsDigest.empty())
    return nullptr;
  std::string digest = weightsDigest(m.weights->bytes(), m.weights->size());
  if (digest == m.manifest.weightsDigest)
    return nullptr;
  return makeStatus(DYNRT_DATA_LOSS,
                    "weights file '" + path + "' is not the one model '" +
                        m.path + "' was built with (its digest is " + digest +
                        ", the model's manifest says " +
                        m.manifest.weightsDigest +
                        "): it was changed or replaced after dynoc build; "
                        "rebuild the model, or load other weights with "
                        "dynrt_model_load_with_weights");
}

extern "C" size_t dynrt_model_num_weights(const dynrt_model_t *model) {
  return model ? weightsOf(*model).size() : 0;
}

extern "C" const char *dynrt_model_weight_name(const dynrt_model_t *model,
                                               size_t index) {
  if (!model)
    return nullptr;
  auto weights = weightsOf(*model);
  return index < weights.size() ? weights[index]->name.c_str() : nullptr;
}

extern "C" dynrt_status_t *dynrt_model_read_weight(dynrt_model_t *model,
                                                   const char *name,
                                                   DLManagedTensor **out) {
  return guarded("dynrt_model_read_weight",
                 [&] { return readWeight(model, name, out); });
}

extern "C" dynrt_status_t *dynrt_model_write_weight(dynrt_model_t *model,
                                                    const char *name,
                                                    const DLTensor *value) {
  return guarded("dynrt_model_write_weight",
                 [&] { return writeWeight(model, name, value); });
}

extern "C" dynrt_status_t *dynrt_model_bind_weight(dynrt_model_t *model,
                                                   const char *name,
                                                   const DLTensor *value) {
  return guarded("dynrt_model_bind_weight",
                 [&] { return bindWeight(model, name, value); });
}

extern "C" dynrt_status_t *dynrt_model_save_weights(dynrt_model_t *model,
                                                    const char *path) {
  return guarded("dynrt_model_save_weights",
                 [&] { return saveWeights(model, path); });
}

extern "C" dynrt_status_t *dynrt_model_load_weights(dynrt_model_t *model,
                                                    const char *path) {
  return guarded("dynrt_model_load_weights",
                 [&] { return loadWeights(model, path); });
}
