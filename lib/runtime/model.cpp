//===- model.cpp - dynrt_model_t and dynrt_context_t: load and run --------===//
#include "dynrt/cpu_features.h"
#include "elf_check.h"
#include "guards.h"
#include "log.h"
#include "model_internal.h"
#include "status.h"

#include <dlfcn.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <set>

namespace {
using dynrt::guarded;
using dynrt::makeStatus;
using dynrt::Variant;

std::string dirOf(const std::string &path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

template <class Fn> Fn symbol(void *handle, const std::string &name) {
  return reinterpret_cast<Fn>(dlsym(handle, name.c_str()));
}

/// The copy of weight `w` in `copies` (by `name`), made in the model's
/// memory on first use.
dynrt_status_t *
copyOnce(dynrt_model_t &m,
         std::map<std::string, std::unique_ptr<dynrt::DeviceBuffer>> &copies,
         const std::string &name, const dynrt::TensorView &w, size_t bytes,
         void **out) {
  auto &slot = copies[name];
  if (!slot) {
    auto buffer = std::make_unique<dynrt::DeviceBuffer>(&m.device);
    void *data;
    if (dynrt_status_t *s = buffer->reserve(bytes, &data))
      return s;
    if (dynrt_status_t *s = m.device.upload(data, w.data, bytes, nullptr))
      return s;
    slot = std::move(buffer);
  }
  *out = slot->data();
  return nullptr;
}

/// Where the graphs read weight `w` (named `name`): the weights file's bytes
/// on the CPU, a copy uploaded once for a device model.
dynrt_status_t *weightData(dynrt_model_t &m, const std::string &name,
                           const dynrt::TensorView &w, size_t bytes,
                           void **out) {
  if (m.device.isHost()) {
    *out = const_cast<uint8_t *>(w.data);
    return nullptr;
  }
  return copyOnce(m, m.uploaded, name, w, bytes, out);
}

/// Whether some graph of the model changes weight `name` in place.
bool mutatedByAnyGraph(const dynrt_model_t &m, const std::string &name) {
  for (const dynrt::GraphSpec &g : m.manifest.graphs)
    for (const dynrt::Mutation &mu : g.mutations)
      if (mu.input == name)
        return true;
  return false;
}

/// Points `ptrs` at the data of each non-user input of `g`, in order: a
/// tensor of the weights file, or for a "prepared" input the next of
/// `prepared`. A weight that some graph changes in place (or the caller
/// wrote) is bound to the model's copy of it, so every graph sees its
/// current value; `v` (if given) records the copy back after each run of a
/// graph that changes it.
dynrt_status_t *bindWeights(dynrt_model_t &m, const dynrt::GraphSpec &g,
                            const std::vector<void *> &prepared,
                            std::vector<void *> &ptrs,
                            dynrt::Variant *v = nullptr) {
  size_t nextPrepared = 0;
  for (size_t i = g.numUserInputs; i < g.inputs.size(); ++i) {
    const auto &in = g.inputs[i];
    if (in.kind == "prepared") {
      // parseManifest checked that the counts agree.
      ptrs.push_back(prepared[nextPrepared++]);
      continue;
    }
    const dynrt::TensorView *w = m.weights ? m.weights->find(in.name) : nullptr;
    if (!w)
      return makeStatus(DYNRT_DATA_LOSS, "weights of model '" + m.path +
                                             "' lack tensor '" + in.name +
                                             "' (" + in.kind + " of graph '" +
                                             g.name + "')");
    if (w->dtype != in.dtype || w->shape != in.shape)
      return makeStatus(DYNRT_DATA_LOSS,
                        "weights of model '" + m.path + "': tensor '" +
                            in.name + "' does not match the manifest's " +
                            "dtype/shape");
    auto mutation = std::find_if(
        g.mutations.begin(), g.mutations.end(),
        [&](const dynrt::Mutation &mu) { return mu.input == in.name; });
    size_t bytes = dynrt::byteSize(in);
    if (!m.state.count(in.name) && !mutatedByAnyGraph(m, in.name)) {
      void *data;
      if (dynrt_status_t *s = weightData(m, in.name, *w, bytes, &data))
        return s;
      ptrs.push_back(data);
      continue;
    }
    void *state;
    if (dynrt_status_t *s = copyOnce(m, m.state, in.name, *w, bytes, &state))
      return s;
    ptrs.push_back(state);
    if (!v)
      continue;
    v->stateMutex = &m.stateMutex;
    if (mutation != g.mutations.end())
      v->writeBacks.push_back({mutation->output, state, bytes});
  }
  return nullptr;
}

/// Runs the prepare function `p` of a graph on the weights; its outputs go
/// to `out.prepared` (made on the first run, reused on a later one).
dynrt_status_t *runPrepare(dynrt_model_t &m, const dynrt::GraphSpec &p,
                           dynrt::Variant &out) {
  void *run = dlsym(m.handle, p.symbol.c_str());
  auto shapes = symbol<dynoc_graph_shapes_fn>(m.handle, p.shapesSymbol);
  if (!run || !shapes)
    return makeStatus(DYNRT_DATA_LOSS, "model '" + m.path +
                                           "' lacks the symbol '" +
                                           (run ? p.shapesSymbol : p.symbol) +
                                           "' its manifest names");
  std::vector<void *> args;
  if (dynrt_status_t *s = bindWeights(m, p, {}, args))
    return s;
  std::vector<std::array<int64_t, dynrt::kMaxRank>> outShapes(p.outputs.size());
  std::vector<int64_t *> outShapePtrs;
  for (auto &o : outShapes)
    outShapePtrs.push_back(o.data());
  int64_t workspaceBytes = 0;
  if (const char *why = shapes(nullptr, outShapePtrs.data(), &workspaceBytes))
    return makeStatus(DYNRT_DATA_LOSS, "graph '" + p.name + "': " + why);
  std::vector<void *> outPtrs;
  const bool first = out.prepared.empty();
  for (size_t i = 0; i < p.outputs.size(); ++i) {
    if (first)
      out.prepared.push_back(std::make_unique<dynrt::DeviceBuffer>(&m.device));
    void *data;
    if (dynrt_status_t *s =
            out.prepared[i]->reserve(dynrt::byteSize(p.outputs[i]), &data))
      return s;
    outPtrs.push_back(data);
  }
  dynrt::DeviceBuffer workspace(&m.device);
  void *ws;
  if (dynrt_status_t *s =
          workspace.reserve(std::max<int64_t>(workspaceBytes, 64), &ws))
    return s;
  dynrt::profile::Span span("runtime", "prepare " + p.name);
  dynrt::profile::GraphScope scope(m, p, nullptr);
  int rc = m.device.isHost()
               ? reinterpret_cast<dynoc_graph_run_fn>(run)(nullptr, args.data(),
                                                           outPtrs.data(), ws)
               : reinterpret_cast<dynoc_graph_run_on_fn>(run)(
                     nullptr, args.data(), outPtrs.data(), ws, nullptr);
  if (rc)
    return m.device.isHost()
               ? dynrt::hostGraphFailed(p.name, rc)
               : m.device.failed("graph '" + p.name + "'", rc);
  if (dynrt_status_t *s = m.device.sync(nullptr))
    return s;
  // A prepare run again (a weight it reads changed) wrote new values where
  // the old ones were: kernels that cached something computed from them
  // by address (packed convolution weights) must drop it.
  if (!first && m.weightChanged)
    for (void *data : outPtrs)
      m.weightChanged(data);
  return nullptr;
}

dynrt_status_t *bindVariants(dynrt_model_t &m) {
  const std::string &path = m.path;
  for (auto &g : m.manifest.graphs) {
    Variant v{&g,      nullptr,
              nullptr, symbol<dynoc_graph_shapes_fn>(m.handle, g.shapesSymbol),
              {},      {}};
    if (m.device.isHost())
      v.run = symbol<dynoc_graph_run_fn>(m.handle, g.symbol);
    else
      v.runOn = symbol<dynoc_graph_run_on_fn>(m.handle, g.symbol);
    if (!(v.run || v.runOn) || !v.shapes)
      return makeStatus(DYNRT_DATA_LOSS,
                        "model '" + path + "' lacks the symbol '" +
                            (v.run || v.runOn ? g.shapesSymbol : g.symbol) +
                            "' its manifest names");
    std::vector<void *> prepared;
    if (!g.prepare.empty()) {
      if (dynrt_status_t *s = runPrepare(m, g.prepare.front(), v))
        return s;
      for (auto &p : v.prepared)
        prepared.push_back(p->data());
    }
    if (dynrt_status_t *s = bindWeights(m, g, prepared, v.weightPtrs, &v))
      return s;
    m.variants.push_back(std::move(v));
  }
  return nullptr;
}

dynrt_status_t *loadWeights(dynrt_model_t &m) {
  std::string error;
  m.weightChanged = symbol<dynoc_model_weight_changed_fn>(
      m.handle, DYNOC_MODEL_WEIGHT_CHANGED_SYMBOL);
  if (m.manifest.weightsEmbedded) {
    auto fn =
        symbol<dynoc_model_weights_fn>(m.handle, DYNOC_MODEL_WEIGHTS_SYMBOL);
    if (!fn)
      return makeStatus(DYNRT_DATA_LOSS,
                        "model '" + m.path +
                            "' says its weights are embedded but has no '" +
                            DYNOC_MODEL_WEIGHTS_SYMBOL + "'");
    unsigned long size = 0;
    const void *bytes = fn(&size);
    m.weights = dynrt::SafetensorsFile::fromMemory(
        static_cast<const uint8_t *>(bytes), size,
        "weights embedded in model '" + m.path + "'", error);
  } else if (!m.manifest.weights.empty() && m.fromMemory) {
    return makeStatus(DYNRT_NOT_FOUND,
                      "model <memory> reads its weights from a sidecar ('" +
                          m.manifest.weights +
                          "'), and a model from memory has no file beside "
                          "it: pass weights_path, or build it with "
                          "--embed-weights");
  } else if (!m.manifest.weights.empty()) {
    std::string path = dirOf(m.path) + "/" + m.manifest.weights;
    m.weights = dynrt::SafetensorsFile::open(path, error);
    if (m.weights)
      if (dynrt_status_t *s = dynrt::checkSidecarDigest(m, path)) {
        m.weights.reset();
        return s;
      }
  } else {
    return nullptr;
  }
  return m.weights ? nullptr : makeStatus(DYNRT_DATA_LOSS, error);
}

/// The weights file the caller gave (dynrt_model_load_with_weights): it must
/// hold no tensor the model does not read; what the model reads is checked
/// against the manifest as a sidecar is (bindWeights).
dynrt_status_t *loadGivenWeights(dynrt_model_t &m) {
  std::string error;
  m.weights = dynrt::SafetensorsFile::open(m.weightsPath, error);
  if (!m.weights)
    return makeStatus(error.find("does not exist") != std::string::npos
                          ? DYNRT_NOT_FOUND
                          : DYNRT_DATA_LOSS,
                      error);
  std::set<std::string> read;
  auto collect = [&](const dynrt::GraphSpec &g) {
    for (const auto &in : g.inputs)
      if (in.kind != "user" && in.kind != "prepared")
        read.insert(in.name);
  };
  for (const auto &g : m.manifest.graphs) {
    collect(g);
    for (const auto &prep : g.prepare)
      collect(prep);
  }
  for (const auto &[name, view] : m.weights->tensors())
    if (!read.count(name))
      return makeStatus(DYNRT_INVALID_ARGUMENT,
                        "weights file '" + m.weightsPath + "' holds '" + name +
                            "', which is no weight of model '" + m.path + "'");
  return nullptr;
}

/// CPU models run on OpenMP (and oneDNN over it), whose worker threads stay
/// parked inside those libraries. Unloading them with the last model would pull
/// the code from under those threads, so once a model brought them in they
/// stay loaded for the life of the process.
void pinThreadingRuntimes() {
  for (const char *lib : {"libgomp.so.1", "libdnnl.so.2", "libdnnl.so.3"})
    dlopen(lib, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
}

/// A device model: its device API, bound to the caller's current device.
dynrt_status_t *bindDevice(dynrt_model_t &m, int abi) {
  auto deviceFn =
      symbol<dynoc_model_device_fn>(m.handle, DYNOC_MODEL_DEVICE_SYMBOL);
  const dynoc_device_api *api = deviceFn ? deviceFn() : nullptr;
  if (abi < DYNOC_MODEL_ABI_VERSION || !api ||
      api->version != DYNOC_DEVICE_API_VERSION)
    return makeStatus(DYNRT_DATA_LOSS, "model '" + m.path + "' is built for " +
                                           m.manifest.device +
                                           " but exports no usable '" +
                                           DYNOC_MODEL_DEVICE_SYMBOL + "'");
  int ordinal = 0;
  if (api->current_device(&ordinal))
    return makeStatus(DYNRT_UNIMPLEMENTED, "model '" + m.path + "' needs a " +
                                               m.manifest.device +
                                               " device: " + api->last_error());
  if (api->init(ordinal))
    return makeStatus(DYNRT_UNIMPLEMENTED,
                      "model '" + m.path + "' cannot use " + m.manifest.device +
                          " device " + std::to_string(ordinal) + ": " +
                          api->last_error());
  m.device = dynrt::Device(api, ordinal);
  return nullptr;
}

/// Refuses a model whose ".dynoc.cpu" record names an instruction-set
/// extension this CPU lacks (dynoc build --cpu, docs/runtime.md).
dynrt_status_t *checkCpu(const std::string &file, const std::string &path) {
  std::string record, error, level;
  std::vector<std::string> features;
  if (!dynrt::readSection(file, ".dynoc.cpu", record, error))
    return makeStatus(DYNRT_DATA_LOSS,
                      "cannot load model '" + path + "': " + error);
  if (record.empty())
    return nullptr; // built before the record existed, or not for a CPU
  if (!dynrt::parseCpuRecord(record, level, features))
    return makeStatus(DYNRT_DATA_LOSS, "model '" + path +
                                           "' has a malformed CPU record '" +
                                           record + "'");
  std::string missing;
  for (const std::string &f : features)
    if (!dynrt::cpuHasFeature(f))
      missing += (missing.empty() ? "" : ", ") + f;
  if (missing.empty())
    return nullptr;
  return makeStatus(DYNRT_UNIMPLEMENTED,
                    "model '" + path + "' was built for CPU '" + level +
                        "' and this CPU lacks " + missing +
                        " (rebuild it with dynoc build --cpu=generic, or a "
                        "level this CPU has)");
}

/// Loads the shared object at `openPath`; `m.path` names it in messages.
dynrt_status_t *loadOpened(std::unique_ptr<dynrt_model_t> m,
                           const std::string &openPath, dynrt_model_t **out) {
  const std::string &p = m->path;
  std::string error;
  if (!dynrt::checkSharedObject(openPath, error))
    return makeStatus(DYNRT_DATA_LOSS,
                      "cannot load model '" + p + "': " + error);
  // The CPU features the code was built for are checked before dlopen: a
  // model's static initializers may already use them.
  if (dynrt_status_t *s = checkCpu(openPath, p))
    return s;
  m->handle = dlopen(openPath.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!m->handle) {
    const char *why = dlerror();
    return makeStatus(DYNRT_DATA_LOSS, "cannot load model '" + p + "': " +
                                           (why ? why : "unknown error"));
  }
  pinThreadingRuntimes();
  auto manifestFn =
      symbol<dynoc_model_manifest_fn>(m->handle, DYNOC_MODEL_MANIFEST_SYMBOL);
  auto abiFn = symbol<dynoc_model_abi_version_fn>(
      m->handle, DYNOC_MODEL_ABI_VERSION_SYMBOL);
  if (!manifestFn || !abiFn)
    return makeStatus(DYNRT_INVALID_ARGUMENT,
                      "'" + p +
                          "' is not a dynoc model (no embedded manifest)");
  if (abiFn() != DYNOC_MODEL_ABI_VERSION &&
      abiFn() != DYNOC_MODEL_ABI_VERSION_CPU)
    return makeStatus(DYNRT_UNIMPLEMENTED,
                      "model '" + p + "' has ABI version " +
                          std::to_string(abiFn()) + "; this runtime reads " +
                          std::to_string(DYNOC_MODEL_ABI_VERSION_CPU) +
                          " (CPU) and " +
                          std::to_string(DYNOC_MODEL_ABI_VERSION) +
                          " (rebuild it with this dynoc)");
  m->manifestText = manifestFn();
  if (!dynrt::parseManifest(m->manifestText, m->manifest, error))
    return makeStatus(DYNRT_DATA_LOSS, "model '" + p + "': " + error);
  m->setProfiler = symbol<dynoc_model_set_profiler_fn>(
      m->handle, DYNOC_MODEL_SET_PROFILER_SYMBOL);
  // From here a recording sees the load's own kernels (prepare functions).
  dynrt::profile::attach(*m);
  dynrt::profile::Span span("runtime", "load " + p);
  if (m->manifest.device != "cpu")
    if (dynrt_status_t *s = bindDevice(*m, abiFn()))
      return s;
  if (dynrt_status_t *s =
          m->weightsPath.empty() ? loadWeights(*m) : loadGivenWeights(*m))
    return s;
  if (dynrt_status_t *s = bindVariants(*m))
    return s;
  if (dynrt::logEnabled(DYNRT_LOG_INFO)) {
    std::string weights = m->weightsPath.empty()
                              ? m->manifest.weightsEmbedded ? "embedded weights"
                                : m->manifest.weights.empty()
                                    ? "no weights"
                                    : "weights '" + m->manifest.weights + "'"
                              : "weights '" + m->weightsPath + "'";
    dynrt::logMessage(DYNRT_LOG_INFO, "loaded model '" + p +
                                          "': " + m->device.name() + ", " +
                                          std::to_string(m->variants.size()) +
                                          " graph(s), " + weights);
  }
  *out = m.release();
  return nullptr;
}

dynrt_status_t *load(const char *path, const char *weightsPath,
                     dynrt_model_t **out) {
  if (!path || !out)
    return makeStatus(DYNRT_INVALID_ARGUMENT,
                      "dynrt_model_load: null argument");
  *out = nullptr;
  std::string p = path;
  struct stat st;
  if (stat(path, &st) != 0)
    return makeStatus(DYNRT_NOT_FOUND, "model '" + p + "' does not exist");
  auto m = std::make_unique<dynrt_model_t>();
  m->path = p;
  m->weightsPath = weightsPath ? weightsPath : "";
  // dlopen resolves a bare name through the library path; keep it a file path.
  return loadOpened(std::move(m),
                    p.find('/') == std::string::npos ? "./" + p : p, out);
}

/// A model from memory: its bytes go to an anonymous in-memory file
/// (memfd), which the loader opens by its /proc/self/fd path.
dynrt_status_t *loadFromMemory(const void *data, size_t size,
                               const char *weightsPath, dynrt_model_t **out) {
  if (!data || !out)
    return makeStatus(DYNRT_INVALID_ARGUMENT,
                      "dynrt_model_load_from_memory: null argument");
  *out = nullptr;
  int fd = memfd_create("dynoc-model", MFD_CLOEXEC);
  if (fd < 0)
    return makeStatus(DYNRT_RESOURCE_EXHAUSTED,
                      std::string("cannot make an in-memory file: ") +
                          std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() { close(fd); } // the loader keeps its own mapping
  } closer{fd};
  for (size_t done = 0; done < size;) {
    ssize_t n = write(fd, static_cast<const char *>(data) + done, size - done);
    if (n <= 0)
      return makeStatus(DYNRT_RESOURCE_EXHAUSTED,
                        std::string("cannot write the model to memory: ") +
                            std::strerror(errno));
    done += size_t(n);
  }
  auto m = std::make_unique<dynrt_model_t>();
  m->path = "<memory>";
  m->fromMemory = true;
  m->weightsPath = weightsPath ? weightsPath : "";
  return loadOpened(std::move(m), "/proc/self/fd/" + std::to_string(fd), out);
}

//===----------------------------------------------------------------------===//
// Running
//===----------------------------------------------------------------------===//

using dynrt::kMaxRank;

/// A call after variant selection: the variant whose guards passed, and the
/// shapes and workspace size it resolved.
struct Prepared {
  const Variant *variant = nullptr;
  std::vector<const int64_t *> inShapes;
  std::vector<std::array<int64_t, kMaxRank>> outShapes;
  int64_t workspaceBytes = 0;
};

/// Selects the variant of `function` (a bundled model's; "" for the model's
/// one function) whose guards pass for `inputs`.
dynrt_status_t *prepare(const dynrt_model_t *m, const std::string &function,
                        const DLTensor *const *inputs, size_t numInputs,
                        size_t numOutputs, Prepared &call) {
  const Variant *firstVariant = nullptr;
  for (const Variant &v : m->variants)
    if (v.spec->function == function) {
      firstVariant = &v;
      break;
    }
  if (!firstVariant)
    return makeStatus(DYNRT_INVALID_ARGUMENT, "model '" + m->path +
                                                  "' has no function '" +
                                                  function + "'");
  const dynrt::GraphSpec &first = *firstVariant->spec;
  if (numInputs != first.numUserInputs)
    return makeStatus(DYNRT_INVALID_ARGUMENT,
                      "model takes " + std::to_string(first.numUserInputs) +
                          " inputs, got " + std::to_string(numInputs));
  if (numOutputs != first.outputs.size())
    return makeStatus(DYNRT_INVALID_ARGUMENT,
                      "model has " + std::to_string(first.outputs.size()) +
                          " outputs, caller asked for " +
                          std::to_string(numOutputs));
  call.inShapes.resize(numInputs);
  for (size_t i = 0; i < numInputs; ++i) {
    if (!inputs[i])
      return makeStatus(DYNRT_INVALID_ARGUMENT,
                        "input " + std::to_string(i) + " is null");
    call.inShapes[i] = inputs[i]->shape;
  }
  call.outShapes.resize(numOutputs);
  std::vector<int64_t *> outShapePtrs(numOutputs);
  for (size_t i = 0; i < numOutputs; ++i)
    outShapePtrs[i] = call.outShapes[i].data();
  std::string firstFailure;
  for (const Variant &v : m->variants) {
    if (v.spec->function != function)
      continue;
    std::string failure;
    // Guards first: their failure is in the manifest's (the user's) words.
    if (!dynrt::checkGuards(*v.spec, inputs, failure) ||
        !dynrt::checkSignature(*v.spec, inputs, failure)) {
      if (firstFailure.empty())
        firstFailure = failure;
      continue;
    }
    if (const char *why = v.shapes(call.inShapes.data(), outShapePtrs.data(),
                                   &call.workspaceBytes)) {
      if (firstFailure.empty())
        firstFailure = "graph '" + v.spec->name + "': " + why;
      continue;
    }
    call.variant = &v;
    if (!firstFailure.empty() && dynrt::logEnabled(DYNRT_LOG_DEBUG))
      dynrt::logMessage(DYNRT_LOG_DEBUG, "model '" + m->path + "' runs '" +
                                             v.spec->name +
                                             "': " + firstFailure);
    return nullptr;
  }
  return makeStatus(DYNRT_INVALID_ARGUMENT, firstFailure);
}

} // namespace

/// Frees a runtime-allocated output; `manager_ctx` is the device API its
/// memory came from (NULL: host memory). A device output must be freed
/// while its model is loaded.
void dynrt::deleteManaged(DLManagedTensor *t) {
  if (!t)
    return;
  auto *api = static_cast<const dynoc_device_api *>(t->manager_ctx);
  if (api)
    api->release(t->dl_tensor.data);
  else
    std::free(t->dl_tensor.data);
  delete[] t->dl_tensor.shape;
  delete t;
}

dynrt_status_t *dynrt::allocOutput(const Device &device, const TensorSpec &spec,
                                   const int64_t *shape, size_t index,
                                   DLManagedTensor **out) {
  size_t numel = 1, rank = spec.shape.size();
  for (size_t d = 0; d < rank; ++d)
    numel *= static_cast<size_t>(shape[d]);
  const auto &info = dynrt::dtypeInfo(spec.dtype);
  void *data;
  if (dynrt_status_t *s = device.alloc(numel * info.itemSize, &data,
                                       "output " + std::to_string(index)))
    return s;
  auto *t = new (std::nothrow) DLManagedTensor();
  auto *dims = new (std::nothrow) int64_t[rank + 1];
  if (!t || !dims) {
    device.release(data);
    delete t;
    delete[] dims;
    return makeStatus(DYNRT_RESOURCE_EXHAUSTED,
                      "cannot allocate output " + std::to_string(index));
  }
  std::copy(shape, shape + rank, dims);
  t->dl_tensor =
      DLTensor{data, device.dl(), (int32_t)rank, info.dl, dims, nullptr, 0};
  t->manager_ctx = const_cast<dynoc_device_api *>(device.api());
  t->deleter = deleteManaged;
  *out = t;
  return nullptr;
}

namespace {
using dynrt::allocOutput;
using dynrt::deleteManaged;
using dynrt::Variant;

/// Checks that a caller's output buffer fits output `i` of the call.
dynrt_status_t *checkOutputBuffer(const dynrt::Device &device,
                                  const Prepared &call, size_t i,
                                  const DLTensor *t) {
  const dynrt::TensorSpec &spec = call.variant->spec->outputs[i];
  std::string where = "output " + std::to_string(i) + " ('" + spec.name + "')";
  if (!t)
    return makeStatus(DYNRT_INVALID_ARGUMENT, where + ": buffer is null");
  int64_t numel = 1;
  for (int d = 0; d < t->ndim; ++d)
    numel *= t->shape[d];
  // An empty tensor's data may be NULL (torch's are).
  if (!t->data && numel != 0)
    return makeStatus(DYNRT_INVALID_ARGUMENT, where + ": buffer is null");
  if (t->device.device_type != device.dl().device_type ||
      (!device.isHost() && t->device.device_id != device.dl().device_id))
    return makeStatus(DYNRT_INVALID_ARGUMENT,
                      where + ": buffer is not on " + device.name());
  auto dtype = dynrt::dtypeFromDLPack(t->dtype);
  if (!dtype || *dtype != spec.dtype)
    return makeStatus(DYNRT_INVALID_ARGUMENT,
                      where + ": buffer must be " +
                          std::string(dynrt::dtypeInfo(spec.dtype).torchName));
  const int64_t *want = call.outShapes[i].data();
  bool same = t->ndim == (int32_t)spec.shape.size() &&
              std::equal(want, want + t->ndim, t->shape);
  if (!same) {
    auto list = [](const int64_t *v, int n) {
      std::string s = "[";
      for (int d = 0; d < n; ++d)
        s += (d ? ", " : "") + std::to_string(v[d]);
      return s + "]";
    };
    return makeStatus(DYNRT_INVALID_ARGUMENT,
                      where + ": buffer has shape " + list(t->shape, t->ndim) +
                          ", the model computes " +
                          list(want, (int)spec.shape.size()));
  }
  if (!dynrt::isContiguous(*t))
    return makeStatus(DYNRT_INVALID_ARGUMENT,
                      where + ": buffer must be contiguous");
  return nullptr;
}

/// A run span's arguments: the model and its inputs' shapes.
std::string runArgs(const dynrt_model_t &m, const Prepared &call,
                    const DLTensor *const *inputs) {
  nlohmann::json shapes = nlohmann::json::array();
  for (size_t i = 0; i < call.inShapes.size(); ++i)
    shapes.push_back(std::vector<int64_t>(inputs[i]->shape,
                                          inputs[i]->shape + inputs[i]->ndim));
  nlohmann::json args = {{"model", m.path}, {"input_shapes", shapes}};
  return args.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

/// Runs a prepared call with `outPtrs` as the output buffers, in `context`'s
/// workspace and stream (NULL: a workspace of its own, the default stream).
dynrt_status_t *execute(dynrt_model_t &m, const Prepared &call,
                        const DLTensor *const *inputs, void *const *outPtrs,
                        dynrt_context_t *context) {
  const Variant &v = *call.variant;
  const auto &spec = *v.spec;
  if (dynrt_status_t *s = dynrt::requireCommunicator(m, spec))
    return s;
  size_t numInputs = spec.numUserInputs;
  std::vector<void *> args(spec.inputs.size());
  for (size_t i = 0; i < numInputs; ++i)
    args[i] = static_cast<char *>(inputs[i]->data) + inputs[i]->byte_offset;
  std::copy(v.weightPtrs.begin(), v.weightPtrs.end(), args.begin() + numInputs);
  dynrt::DeviceBuffer local(&m.device);
  dynrt::DeviceBuffer &workspace = context ? context->workspace : local;
  void *stream = context ? context->stream : nullptr;
  void *ws;
  bool grown = false;
  if (dynrt_status_t *s = workspace.reserve(
          std::max<int64_t>(call.workspaceBytes, 64), &ws, &grown))
    return s;
  // A graph that changes weights reads and writes the model's copies: such
  // runs take turns (others stay lock-free).
  std::unique_lock<std::mutex> lock;
  if (v.stateMutex)
    lock = std::unique_lock<std::mutex>(*v.stateMutex);
  std::optional<dynrt::profile::Span> span;
  if (dynrt::profile::active())
    span.emplace("runtime", "run " + spec.name, runArgs(m, call, inputs));
  dynrt::profile::GraphScope scope(m, spec, stream);
  if (v.run) {
    if (int rc = v.run(call.inShapes.data(), args.data(), outPtrs, ws))
      return rc == dynrt::kCollectiveFailed
                 ? dynrt::collectiveFailed(spec.name)
                 : dynrt::hostGraphFailed(spec.name, rc);
  } else {
    std::vector<size_t> outBytes;
    for (size_t i = 0; i < spec.outputs.size(); ++i) {
      size_t bytes = dynrt::dtypeInfo(spec.outputs[i].dtype).itemSize;
      for (size_t d = 0; d < spec.outputs[i].shape.size(); ++d)
        bytes *= static_cast<size_t>(call.outShapes[i][d]);
      outBytes.push_back(bytes);
    }
    dynrt::GraphRun run{&m.device, &v,      v.runOn,  spec.name, call.inShapes,
                        args,      outPtrs, outBytes, ws,        stream};
    if (grown && context)
      context->graphs.clear(); // their captured workspace is gone
    // While profiling, every kernel is seen: no CUDA graph replays. A graph
    // with collectives is captured only where its communicator records them
    // into the capture (NCCL's); another (torch.distributed's, which may wait
    // on the host) runs it directly. Each replay is handed to the
    // communicator, whose timeout then bounds the replay's collectives.
    const bool collectives = dynrt::usesCollectives(spec);
    std::function<dynrt_status_t *(void *, bool)> replay;
    if (collectives) {
      replay = [&](void *st, bool queued) {
        return dynrt::graphReplay(m, spec, st, queued);
      };
      run.onReplay = &replay;
    }
    dynrt_status_t *s =
        context && !dynrt::profile::active() &&
                (!collectives || dynrt::collectivesCapturable(m))
            ? context->graphs.run(run, inputs)
            : dynrt::runDirect(run);
    if (s)
      return s;
  }
  for (const Variant::WriteBack &wb : v.writeBacks) {
    if (dynrt_status_t *s =
            m.device.copy(wb.state, outPtrs[wb.output], wb.bytes, stream))
      return s;
    if (m.weightChanged)
      m.weightChanged(wb.state);
  }
  // Without a context the workspace is freed on return: the device must be
  // done with it.
  if (!context)
    return m.device.sync(stream);
  return nullptr;
}

/// The function dynrt_model_run and the context calls run: the first
/// graph's.
const std::string &mainFunction(const dynrt_model_t *m) {
  return m->manifest.graphs.front().function;
}

dynrt_status_t *runAllocating(const char *fn, dynrt_model_t *m,
                              dynrt_context_t *context,
                              const DLTensor *const *inputs, size_t numInputs,
                              DLManagedTensor **outputs, size_t numOutputs,
                              const std::string *function = nullptr) {
  if (!m || (!inputs && numInputs) || (!outputs && numOutputs))
    return makeStatus(DYNRT_INVALID_ARGUMENT,
                      std::string(fn) + ": null argument");
  for (size_t i = 0; i < numOutputs; ++i)
    outputs[i] = nullptr;
  Prepared call;
  if (dynrt_status_t *s = prepare(m, function ? *function : mainFunction(m),
                                  inputs, numInputs, numOutputs, call))
    return s;
  std::vector<void *> outPtrs(numOutputs);
  auto freeAll = [&] {
    for (size_t i = 0; i < numOutputs; ++i)
      deleteManaged(outputs[i]), outputs[i] = nullptr;
  };
  for (size_t i = 0; i < numOutputs; ++i) {
    if (dynrt_status_t *s =
            allocOutput(m->device, call.variant->spec->outputs[i],
                        call.outShapes[i].data(), i, &outputs[i])) {
      freeAll();
      return s;
    }
    outPtrs[i] = outputs[i]->dl_tensor.data;
  }
  if (dynrt_status_t *s = execute(*m, call, inputs, outPtrs.data(), context)) {
    freeAll();
    return s;
  }
  return nullptr;
}

/// What every context call starts with: argument checks, then the variant and
/// shapes for these inputs. `outs` is the call's output array.
dynrt_status_t *prepareContextCall(const char *fn, dynrt_context_t *c,
                                   const DLTensor *const *inputs,
                                   size_t numInputs, const void *outs,
                                   size_t numOutputs, Prepared &call) {
  if (!c || (!inputs && numInputs) || (!outs && numOutputs))
    return makeStatus(DYNRT_INVALID_ARGUMENT,
                      std::string(fn) + ": null argument");
  return prepare(c->model, mainFunction(c->model), inputs, numInputs,
                 numOutputs, call);
}

dynrt_status_t *runInto(dynrt_context_t *c, const DLTensor *const *inputs,
                        size_t numInputs, const DLTensor *const *outputs,
                        size_t numOutputs) {
  Prepared call;
  if (dynrt_status_t *s =
          prepareContextCall("dynrt_context_run_into", c, inputs, numInputs,
                             outputs, numOutputs, call))
    return s;
  std::vector<void *> outPtrs(numOutputs);
  for (size_t i = 0; i < numOutputs; ++i) {
    if (dynrt_status_t *s =
            checkOutputBuffer(c->model->device, call, i, outputs[i]))
      return s;
    outPtrs[i] =
        static_cast<char *>(outputs[i]->data) + outputs[i]->byte_offset;
  }
  return execute(*c->model, call, inputs, outPtrs.data(), c);
}

dynrt_status_t *outputShapes(dynrt_context_t *c, const DLTensor *const *inputs,
                             size_t numInputs, int64_t *const *shapes,
                             size_t numOutputs) {
  Prepared call;
  if (dynrt_status_t *s =
          prepareContextCall("dynrt_context_output_shapes", c, inputs,
                             numInputs, shapes, numOutputs, call))
    return s;
  for (size_t i = 0; i < numOutputs; ++i)
    std::copy_n(call.outShapes[i].data(),
                call.variant->spec->outputs[i].shape.size(), shapes[i]);
  return nullptr;
}

} // namespace

dynrt_status_t *dynrt::runFunction(const char *fn, dynrt_context_t *context,
                                   const std::string &function,
                                   const DLTensor *const *inputs,
                                   size_t numInputs, DLManagedTensor **outputs,
                                   size_t numOutputs) {
  return runAllocating(fn, context->model, context, inputs, numInputs, outputs,
                       numOutputs, &function);
}

size_t dynrt::byteSize(const dynrt::TensorSpec &t) {
  size_t bytes = dynrt::dtypeInfo(t.dtype).itemSize;
  for (int64_t d : t.shape)
    bytes *= static_cast<size_t>(std::max<int64_t>(d, 0));
  return bytes;
}

dynrt_status_t *dynrt::stateCopy(dynrt_model_t &m, const std::string &name,
                                 const TensorView &w, size_t bytes,
                                 void **out) {
  bool made = !m.state.count(name);
  if (dynrt_status_t *s = copyOnce(m, m.state, name, w, bytes, out))
    return s;
  if (!made)
    return nullptr;
  for (Variant &v : m.variants) {
    const GraphSpec &g = *v.spec;
    for (size_t i = g.numUserInputs; i < g.inputs.size(); ++i)
      if (g.inputs[i].kind != "prepared" && g.inputs[i].name == name) {
        v.weightPtrs[i - g.numUserInputs] = *out;
        v.stateMutex = &m.stateMutex;
      }
  }
  return nullptr;
}

dynrt_status_t *dynrt::reprepare(dynrt_model_t &m, const std::string &name) {
  for (Variant &v : m.variants) {
    if (v.spec->prepare.empty())
      continue;
    const GraphSpec &p = v.spec->prepare.front();
    bool reads =
        std::any_of(p.inputs.begin(), p.inputs.end(),
                    [&](const TensorSpec &in) { return in.name == name; });
    if (reads)
      if (dynrt_status_t *s = runPrepare(m, p, v))
        return s;
  }
  return nullptr;
}

extern "C" dynrt_status_t *dynrt_model_load(const char *path,
                                            dynrt_model_t **out_model) {
  return guarded("dynrt_model_load",
                 [&] { return load(path, nullptr, out_model); });
}

extern "C" dynrt_status_t *
dynrt_model_load_with_weights(const char *path, const char *weights_path,
                              dynrt_model_t **out_model) {
  if (!weights_path)
    return makeStatus(DYNRT_INVALID_ARGUMENT,
                      "dynrt_model_load_with_weights: null weights path");
  return guarded("dynrt_model_load_with_weights",
                 [&] { return load(path, weights_path, out_model); });
}

extern "C" dynrt_status_t *
dynrt_model_load_from_memory(const void *data, size_t size,
                             const char *weights_path,
                             dynrt_model_t **out_model) {
  return guarded("dynrt_model_load_from_memory", [&] {
    return loadFromMemory(data, size, weights_path, out_model);
  });
}

extern "C" void dynrt_model_release(dynrt_model_t *model) { delete model; }

extern "C" dynrt_status_t *dynrt_model_run(dynrt_model_t *model,
                                           const DLTensor *const *inputs,
                                           size_t num_inputs,
                                           DLManagedTensor **outputs,
                                           size_t num_outputs) {
  return guarded("dynrt_model_run", [&] {
    return runAllocating("dynrt_model_run", model, nullptr, inputs, num_inputs,
                         outputs, num_outputs);
  });
}

extern "C" dynrt_status_t *dynrt_context_create(dynrt_model_t *model,
                                                DLDevice device, void *stream,
                                                dynrt_context_t **out_context) {
  return guarded("dynrt_context_create", [&]() -> dynrt_status_t * {
    if (!model || !out_context)
      return makeStatus(DYNRT_INVALID_ARGUMENT,
                        "dynrt_context_create: null argument");
    *out_context = nullptr;
    DLDevice want = model->device.dl();
    if (device.device_type != want.device_type ||
        (!model->device.isHost() && device.device_id != want.device_id))
      return makeStatus(DYNRT_UNIMPLEMENTED,
                        "model '" + model->path + "' was built for " +
                            (model->device.isHost() ? std::string("the CPU")
                                                    : model->device.name()) +
                            "; it cannot run on DLPack device type " +
                            std::to_string(int(device.device_type)) +
                            (model->device.isHost()
                                 ? std::string()
                                 : " id " + std::to_string(device.device_id)));
    auto *c = new (std::nothrow) dynrt_context_t{model, device, stream};
    if (!c)
      return makeStatus(DYNRT_RESOURCE_EXHAUSTED, "cannot allocate a context");
    c->workspace.setDevice(&model->device);
    const char *graphs = getenv("DYNRT_CUDA_GRAPHS");
    c->graphs.setEnabled(!(graphs && std::string(graphs) == "0"));
    *out_context = c;
    return nullptr;
  });
}

extern "C" void dynrt_context_release(dynrt_context_t *context) {
  delete context;
}

extern "C" dynrt_status_t *dynrt_context_run(dynrt_context_t *context,
                                             const DLTensor *const *inputs,
                                             size_t num_inputs,
                                             DLManagedTensor **outputs,
                                             size_t num_outputs) {
  return guarded("dynrt_context_run", [&] {
    if (!context)
      return makeStatus(DYNRT_INVALID_ARGUMENT,
                        "dynrt_context_run: null argument");
    return runAllocating("dynrt_context_run", context->model, context, inputs,
                         num_inputs, outputs, num_outputs);
  });
}

extern "C" dynrt_status_t *
dynrt_context_run_into(dynrt_context_t *context, const DLTensor *const *inputs,
                       size_t num_inputs, const DLTensor *const *outputs,
                       size_t num_outputs) {
  return guarded("dynrt_context_run_into", [&] {
    return runInto(context, inputs, num_inputs, outputs, num_outputs);
  });
}

extern "C" dynrt_status_t *
dynrt_context_output_shapes(dynrt_context_t *context,
                            const DLTensor *const *inputs, size_t num_inputs,
                            int64_t *const *shapes, size_t num_outputs) {
  return guarded("dynrt_context_output_shapes", [&] {
    return outputShapes(context, inputs, num_inputs, shapes, num_outputs);
  });
}

extern "C" dynrt_status_t *
dynrt_context_set_cuda_graphs(dynrt_context_t *context, int enabled) {
  if (!context)
    return makeStatus(DYNRT_INVALID_ARGUMENT,
                      "dynrt_context_set_cuda_graphs: null argument");
  context->graphs.setEnabled(enabled != 0);
  return nullptr;
}

