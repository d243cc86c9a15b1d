//===- dynrt.hpp - header-only C++ wrapper of the dynrt C API ---*- C++ -*-===//
#ifndef DYNRT_DYNRT_HPP
#define DYNRT_DYNRT_HPP

#include "dynrt/dynrt.h"

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace dynrt {

/// An error from the runtime, carrying the status code and message.
class Error : public std::runtime_error {
public:
  Error(dynrt_status_t *status)
      : std::runtime_error(dynrt_status_message(status)),
        code_(dynrt_status_code(status)) {
    dynrt_status_free(status);
  }
  dynrt_status_code_t code() const { return code_; }

private:
  dynrt_status_code_t code_;
};

inline void check(dynrt_status_t *status) {
  if (status)
    throw Error(status);
}

/// An output tensor owned by the caller.
using Tensor = std::unique_ptr<DLManagedTensor, void (*)(DLManagedTensor *)>;

/// Takes ownership of tensors the runtime allocated.
inline std::vector<Tensor> own(const std::vector<DLManagedTensor *> &raw) {
  std::vector<Tensor> out;
  for (DLManagedTensor *t : raw)
    out.emplace_back(t, [](DLManagedTensor *p) { p->deleter(p); });
  return out;
}

/// A float32 CPU tensor that owns its data, for building inputs and
/// caller-provided outputs. view() is valid while the HostTensor lives.
struct HostTensor {
  std::vector<int64_t> shape;
  std::vector<float> data;
  HostTensor() = default;
  HostTensor(std::vector<int64_t> s, float fill = 0.f) : shape(std::move(s)) {
    size_t n = 1;
    for (int64_t d : shape)
      n *= static_cast<size_t>(d);
    data.assign(n, fill);
  }
  DLTensor view() {
    return DLTensor{data.data(),
                    {kDLCPU, 0},
                    (int32_t)shape.size(),
                    {kDLFloat, 32, 1},
                    shape.data(),
                    nullptr,
                    0};
  }
};

/// A loaded model. Thread-safe: `run` may be called from many threads at once.
class Model {
public:
  explicit Model(const std::string &path) {
    dynrt_model_t *m = nullptr;
    check(dynrt_model_load(path.c_str(), &m));
    model_.reset(m);
  }
  /// The model at `path` with the weights of `weightsPath` instead of its own.
  Model(const std::string &path, const std::string &weightsPath) {
    dynrt_model_t *m = nullptr;
    check(dynrt_model_load_with_weights(path.c_str(), weightsPath.c_str(), &m));
    model_.reset(m);
  }
  /// A model from the `size` bytes at `data`, with the weights of
  /// `weightsPath` ("": those linked into it).
  static Model fromMemory(const void *data, size_t size,
                          const std::string &weightsPath = "") {
    dynrt_model_t *m = nullptr;
    check(dynrt_model_load_from_memory(
        data, size, weightsPath.empty() ? nullptr : weightsPath.c_str(), &m));
    return Model(m);
  }
  std::string manifest() const { return dynrt_model_manifest(model_.get()); }
  size_t numInputs() const { return dynrt_model_num_inputs(model_.get()); }
  size_t numOutputs() const { return dynrt_model_num_outputs(model_.get()); }

  std::vector<Tensor> run(const std::vector<const DLTensor *> &inputs) const {
    std::vector<DLManagedTensor *> raw(numOutputs(), nullptr);
    check(dynrt_model_run(model_.get(), inputs.data(), inputs.size(),
                          raw.data(), raw.size()));
    return own(raw);
  }

  /// The weights' names (parameters, optimizer state, learning rates).
  std::vector<std::string> weightNames() const {
    std::vector<std::string> names;
    for (size_t i = 0, n = dynrt_model_num_weights(model_.get()); i < n; ++i)
      names.emplace_back(dynrt_model_weight_name(model_.get(), i));
    return names;
  }
  /// A copy of weight `name`'s current value.
  Tensor readWeight(const std::string &name) const {
    DLManagedTensor *t = nullptr;
    check(dynrt_model_read_weight(model_.get(), name.c_str(), &t));
    return std::move(own({t}).front());
  }
  /// Sets weight `name` (not while another thread runs the model).
  void writeWeight(const std::string &name, const DLTensor &value) {
    check(dynrt_model_write_weight(model_.get(), name.c_str(), &value));
  }
  /// Makes weight `name` live in `value`'s memory (no copy); bind again
  /// after changing it in place (dynrt_model_bind_weight).
  void bindWeight(const std::string &name, const DLTensor &value) {
    check(dynrt_model_bind_weight(model_.get(), name.c_str(), &value));
  }
  /// Writes every weight's current value to a safetensors checkpoint.
  void saveWeights(const std::string &path) const {
    check(dynrt_model_save_weights(model_.get(), path.c_str()));
  }
  /// Restores the weights a safetensors checkpoint holds.
  void loadWeights(const std::string &path) {
    check(dynrt_model_load_weights(model_.get(), path.c_str()));
  }

  /// A bundled model's function names (dynrt_model_function_name).
  std::vector<std::string> functions() const {
    std::vector<std::string> names;
    for (size_t i = 0, n = dynrt_model_num_functions(model_.get()); i < n; ++i)
      names.emplace_back(dynrt_model_function_name(model_.get(), i));
    return names;
  }
  /// The inputs a caller gives `function`, by manifest name.
  std::vector<std::string> functionInputs(const std::string &function) const {
    size_t in = 0, out = 0;
    check(
        dynrt_model_function_arity(model_.get(), function.c_str(), &in, &out));
    std::vector<std::string> names;
    for (size_t i = 0; i < in; ++i)
      names.emplace_back(
          dynrt_model_function_input_name(model_.get(), function.c_str(), i));
    return names;
  }

  /// Where its inputs and outputs live: {kDLCPU, 0} or {kDLCUDA, ordinal}.
  DLDevice device() const { return dynrt_model_device(model_.get()); }
  /// A new contiguous tensor on the model's device (contents undefined).
  Tensor allocTensor(DLDataType dtype, const std::vector<int64_t> &shape) const {
    DLManagedTensor *t = nullptr;
    check(dynrt_model_alloc_tensor(model_.get(), dtype, int32_t(shape.size()),
                                   shape.data(), &t));
    return std::move(own({t}).front());
  }
  /// Copies `src` into `dst` (host or the model's device; one dtype and
  /// shape) and waits for the copy.
  void copyTensor(const DLTensor &src, const DLTensor &dst) const {
    check(dynrt_model_copy_tensor(model_.get(), &src, &dst));
  }

  dynrt_model_t *get() const { return model_.get(); }

private:
  explicit Model(dynrt_model_t *m) { model_.reset(m); }
  struct Release {
    void operator()(dynrt_model_t *m) const { dynrt_model_release(m); }
  };
  std::unique_ptr<dynrt_model_t, Release> model_;
};

/// Per-thread state for running a model: a reusable workspace and the device.
/// Not thread-safe; give each thread its own. The model must outlive it.
class Context {
public:
  explicit Context(const Model &model, DLDevice device = {kDLCPU, 0},
                   void *stream = nullptr)
      : numOutputs_(model.numOutputs()) {
    dynrt_context_t *c = nullptr;
    check(dynrt_context_create(model.get(), device, stream, &c));
    context_.reset(c);
  }

  /// Runs with outputs allocated by the runtime.
  std::vector<Tensor> run(const std::vector<const DLTensor *> &inputs) {
    std::vector<DLManagedTensor *> raw(numOutputs_, nullptr);
    check(dynrt_context_run(context_.get(), inputs.data(), inputs.size(),
                            raw.data(), raw.size()));
    return own(raw);
  }

  /// Runs into caller-provided output buffers.
  void runInto(const std::vector<const DLTensor *> &inputs,
               const std::vector<const DLTensor *> &outputs) {
    check(dynrt_context_run_into(context_.get(), inputs.data(), inputs.size(),
                                 outputs.data(), outputs.size()));
  }

  /// Runs function `function` of a bundled model (dynrt_context_call): the
  /// outputs are views the context keeps until `function`'s next call.
  std::vector<const DLTensor *>
  call(const std::string &function,
       const std::vector<const DLTensor *> &inputs) {
    size_t in = 0, out = 0;
    check(dynrt_model_function_arity(dynrt_context_model(context_.get()),
                                     function.c_str(), &in, &out));
    std::vector<const DLTensor *> outputs(out, nullptr);
    check(dynrt_context_call(context_.get(), function.c_str(), inputs.data(),
                             inputs.size(), outputs.data(), outputs.size()));
    return outputs;
  }

  /// Waits for the work queued on the context's stream (device models).
  void synchronize() { check(dynrt_context_synchronize(context_.get())); }

  dynrt_context_t *get() const { return context_.get(); }

private:
  struct Release {
    void operator()(dynrt_context_t *c) const { dynrt_context_release(c); }
  };
  std::unique_ptr<dynrt_context_t, Release> context_;
  size_t numOutputs_;
};

} // namespace dynrt

#endif // DYNRT_DYNRT_HPP
