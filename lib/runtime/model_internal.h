//===- model_internal.h - the loaded model's state, shared by its parts
//----===//
//
// dynrt_model_t and dynrt_context_t, for the files of libdynrt that implement
// the C API: model.cpp (load and run) and weights.cpp (weight accessors and
// checkpoints). Not installed.
//
//===----------------------------------------------------------------------===//
#ifndef DYNRT_MODEL_INTERNAL_H
#define DYNRT_MODEL_INTERNAL_H

#include "collectives.h"
#include "cuda_graphs.h"
#include "device.h"
#include "dynrt/dynrt.h"
#include "dynrt/manifest.h"
#include "dynrt/model_abi.h"
#include "dynrt/safetensors.h"
#include "profiler.h"

#include <dlfcn.h>

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace dynrt {
struct Variant {
  const GraphSpec *spec;
  dynoc_graph_run_fn run;      // CPU models
  dynoc_graph_run_on_fn runOn; // device models: also takes the stream
  dynoc_graph_shapes_fn shapes;
  std::vector<void *> weightPtrs; // one per non-user input, in order
  /// The outputs of the graph's prepare function, computed at load (again
  /// when a weight it reads is written): the data of its "prepared" inputs.
  std::vector<std::unique_ptr<DeviceBuffer>> prepared;
  /// Weights the graph changes in place (a BatchNorm's running statistics, an
  /// optimizer's state, a trained parameter): after each run, output `output`
  /// is copied over the model's own copy of the weight, `bytes` long.
  struct WriteBack {
    size_t output;
    void *state;
    size_t bytes;
  };
  std::vector<WriteBack> writeBacks;
  /// Set when the graph reads or writes a weight copy that a run or a
  /// weight write may change: its runs then hold this mutex.
  std::mutex *stateMutex = nullptr;
};

/// The bytes of a tensor of `t`'s static shape.
size_t byteSize(const TensorSpec &t);
/// Frees a tensor libdynrt allocated (its DLManagedTensor deleter).
void deleteManaged(DLManagedTensor *t);
/// A runtime-owned tensor of `spec`'s dtype and `shape` on `device`.
dynrt_status_t *allocOutput(const Device &device, const TensorSpec &spec,
                            const int64_t *shape, size_t index,
                            DLManagedTensor **out);
} // namespace dynrt

struct dynrt_model_t {
  void *handle = nullptr;
  std::string path; // as messages name it ("<memory>" for a model from memory)
  /// A weights file given at load instead of the sidecar (or those linked
  /// in), or empty.
  std::string weightsPath;
  bool fromMemory = false; // dynrt_model_load_from_memory: no file beside it
  std::string manifestText;
  dynrt::Manifest manifest;
  /// Where the graphs run: host memory, or the device API of the .so.
  dynrt::Device device;
  std::unique_ptr<dynrt::SafetensorsFile> weights;
  /// Device models: each weight uploaded once, by name.
  std::map<std::string, std::unique_ptr<dynrt::DeviceBuffer>> uploaded;
  std::vector<dynrt::Variant> variants;
  /// The model's own copies of the weights that a graph changes in place or
  /// the caller wrote (dynrt_model_write_weight), by name, shared by all
  /// variants; runs that read them and writes hold `stateMutex`.
  std::map<std::string, std::unique_ptr<dynrt::DeviceBuffer>> state;
  std::mutex stateMutex;
  /// The .so's notice that a weight's data changed (model_abi.h), or null.
  dynoc_model_weight_changed_fn weightChanged = nullptr;
  /// The .so's profiling switch (model_abi.h), or null.
  dynoc_model_set_profiler_fn setProfiler = nullptr;
  /// The caller's communicator as the .so's collectives call it
  /// (dynrt_model_set_communicator), or null.
  std::unique_ptr<dynrt::CollectivesBinding, dynrt::CollectivesBindingDeleter>
      collectives;
  ~dynrt_model_t() {
    if (handle)
      dynrt::profile::detach(*this);
    // Device memory goes back through the .so's device API: before dlclose.
    variants.clear();
    uploaded.clear();
    state.clear();
    if (handle)
      dlclose(handle);
  }
};

struct dynrt_context_t {
  dynrt_model_t *model;
  DLDevice device;
  void *stream;
  dynrt::DeviceBuffer workspace{nullptr};
  /// Device models: the CUDA graphs of this context's calls.
  dynrt::GraphCache graphs;
  /// A bundled model's functions: each one's outputs of its last call on
  /// this context (functions.cpp), which later calls read by name.
  std::map<std::string, std::vector<DLManagedTensor *>> kept;
  ~dynrt_context_t() {
    for (auto &[name, outputs] : kept)
      for (DLManagedTensor *t : outputs)
        dynrt::deleteManaged(t);
  }
};

namespace dynrt {
/// The model's own copy of weight `name` (made from `w` on first use), and
/// every variant that reads the weight rebound to it.
dynrt_status_t *stateCopy(dynrt_model_t &m, const std::string &name,
                          const TensorView &w, size_t bytes, void **out);
/// Runs function `function` of the context's model (its first variant whose
/// guards pass) on `inputs`, into runtime-allocated outputs; `fn` names the
/// API call in errors.
dynrt_status_t *runFunction(const char *fn, dynrt_context_t *context,
                            const std::string &function,
                            const DLTensor *const *inputs, size_t numInputs,
                            DLManagedTensor **outputs, size_t numOutputs);
/// Runs the prepare function of each variant that reads weight `name`
/// again (its prepared data was computed from the old value).
dynrt_status_t *reprepare(dynrt_model_t &m, const std::string &name);
/// Checks the weights sidecar `m.weights` (read from `path`) against the
/// digest the build recorded (weights_digest): a file changed or replaced
/// since is refused by name. Null when it matches or none was recorded.
dynrt_status_t *checkSidecarDigest(const dynrt_model_t &m,
                                   const std::string &path);
} // namespace dynrt

#endif // DYNRT_MODEL_INTERNAL_H
