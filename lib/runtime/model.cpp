//===- model.cpp - dynrt_model_t: load and run ----------------------------===//
#include "dynrt/dynrt.h"
#include "dynrt/manifest.h"
#include "dynrt/model_abi.h"
#include "dynrt/safetensors.h"
#include "guards.h"
#include "status.h"

#include <dlfcn.h>
#include <sys/stat.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>

namespace {
struct Variant {
  const dynrt::GraphSpec *spec;
  dynoc_graph_fn fn;
  std::vector<void *> weightPtrs; // one per non-user input, in order
};
} // namespace

struct dynrt_model_t {
  void *handle = nullptr;
  std::string manifestText;
  dynrt::Manifest manifest;
  std::unique_ptr<dynrt::SafetensorsFile> weights;
  std::vector<Variant> variants;
  ~dynrt_model_t() {
    if (handle)
      dlclose(handle);
  }
};

namespace {
using dynrt::makeStatus;

std::string dirOf(const std::string &path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

dynrt_status_t *bindWeights(dynrt_model_t &m, const std::string &path) {
  for (auto &g : m.manifest.graphs) {
    Variant v{
        &g,
        reinterpret_cast<dynoc_graph_fn>(dlsym(m.handle, g.symbol.c_str())),
        {}};
    if (!v.fn)
      return makeStatus(DYNRT_DATA_LOSS, "model '" + path +
                                             "' lacks the symbol '" + g.symbol +
                                             "' its manifest names");
    for (size_t i = g.numUserInputs; i < g.inputs.size(); ++i) {
      const auto &in = g.inputs[i];
      const dynrt::TensorView *w =
          m.weights ? m.weights->find(in.name) : nullptr;
      if (!w)
        return makeStatus(DYNRT_DATA_LOSS, "weights of model '" + path +
                                               "' lack tensor '" + in.name +
                                               "' (" + in.kind + " of graph '" +
                                               g.name + "')");
      if (w->dtype != in.dtype || w->shape != in.shape)
        return makeStatus(DYNRT_DATA_LOSS,
                          "weights of model '" + path + "': tensor '" +
                              in.name + "' does not match the manifest's " +
                              "dtype/shape");
      v.weightPtrs.push_back(const_cast<uint8_t *>(w->data));
    }
    m.variants.push_back(std::move(v));
  }
  return nullptr;
}

dynrt_status_t *load(const char *path, dynrt_model_t **out) {
  if (!path || !out)
    return makeStatus(DYNRT_INVALID_ARGUMENT,
                      "dynrt_model_load: null argument");
  *out = nullptr;
  std::string p = path;
  struct stat st;
  if (stat(path, &st) != 0)
    return makeStatus(DYNRT_NOT_FOUND, "model '" + p + "' does not exist");
  auto m = std::make_unique<dynrt_model_t>();
  // dlopen resolves a bare name through the library path; keep it a file path.
  std::string openPath = p.find('/') == std::string::npos ? "./" + p : p;
  m->handle = dlopen(openPath.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!m->handle) {
    const char *why = dlerror();
    return makeStatus(DYNRT_DATA_LOSS, "cannot load model '" + p + "': " +
                                           (why ? why : "unknown error"));
  }
  auto manifestFn = reinterpret_cast<dynoc_model_manifest_fn>(
      dlsym(m->handle, DYNOC_MODEL_MANIFEST_SYMBOL));
  auto abiFn = reinterpret_cast<dynoc_model_abi_version_fn>(
      dlsym(m->handle, DYNOC_MODEL_ABI_VERSION_SYMBOL));
  if (!manifestFn || !abiFn)
    return makeStatus(DYNRT_INVALID_ARGUMENT,
                      "'" + p +
                          "' is not a dynoc model (no embedded manifest)");
  if (abiFn() != DYNOC_MODEL_ABI_VERSION)
    return makeStatus(DYNRT_UNIMPLEMENTED,
                      "model '" + p + "' has ABI version " +
                          std::to_string(abiFn()) + "; this runtime reads " +
                          std::to_string(DYNOC_MODEL_ABI_VERSION));
  m->manifestText = manifestFn();
  std::string error;
  if (!dynrt::parseManifest(m->manifestText, m->manifest, error))
    return makeStatus(DYNRT_DATA_LOSS, "model '" + p + "': " + error);
  if (!m->manifest.weights.empty()) {
    std::string wpath = dirOf(p) + "/" + m->manifest.weights;
    m->weights = dynrt::SafetensorsFile::open(wpath, error);
    if (!m->weights)
      return makeStatus(DYNRT_DATA_LOSS, error);
  }
  if (dynrt_status_t *s = bindWeights(*m, p))
    return s;
  *out = m.release();
  return nullptr;
}

void deleteManaged(DLManagedTensor *t) {
  if (!t)
    return;
  std::free(t->dl_tensor.data);
  delete[] t->dl_tensor.shape;
  delete t;
}

DLManagedTensor *allocOutput(const dynrt::TensorSpec &spec) {
  size_t numel = 1;
  for (int64_t d : spec.shape)
    numel *= static_cast<size_t>(d);
  const auto &info = dynrt::dtypeInfo(spec.dtype);
  size_t bytes = numel * info.itemSize;
  void *data = std::aligned_alloc(64, ((bytes + 63) / 64) * 64 + 64);
  if (!data)
    return nullptr;
  auto *t = new (std::nothrow) DLManagedTensor();
  auto *shape = new (std::nothrow) int64_t[spec.shape.size() + 1];
  if (!t || !shape) {
    std::free(data);
    delete t;
    delete[] shape;
    return nullptr;
  }
  std::copy(spec.shape.begin(), spec.shape.end(), shape);
  t->dl_tensor = DLTensor{data,    {kDLCPU, 0}, (int32_t)spec.shape.size(),
                          info.dl, shape,       nullptr,
                          0};
  t->manager_ctx = nullptr;
  t->deleter = deleteManaged;
  return t;
}

dynrt_status_t *run(dynrt_model_t *m, const DLTensor *const *inputs,
                    size_t numInputs, DLManagedTensor **outputs,
                    size_t numOutputs) {
  if (!m || (!inputs && numInputs) || (!outputs && numOutputs))
    return makeStatus(DYNRT_INVALID_ARGUMENT, "dynrt_model_run: null argument");
  const Variant *chosen = nullptr;
  std::string firstFailure;
  for (const Variant &v : m->variants) {
    if (numInputs != v.spec->numUserInputs)
      return makeStatus(DYNRT_INVALID_ARGUMENT,
                        "model takes " + std::to_string(v.spec->numUserInputs) +
                            " inputs, got " + std::to_string(numInputs));
    if (numOutputs != v.spec->outputs.size())
      return makeStatus(DYNRT_INVALID_ARGUMENT,
                        "model has " + std::to_string(v.spec->outputs.size()) +
                            " outputs, caller asked for " +
                            std::to_string(numOutputs));
    for (size_t i = 0; i < numInputs; ++i)
      if (!inputs[i])
        return makeStatus(DYNRT_INVALID_ARGUMENT,
                          "input " + std::to_string(i) + " is null");
    std::string failure;
    if (dynrt::checkGuards(*v.spec, inputs, failure)) {
      chosen = &v;
      break;
    }
    if (firstFailure.empty())
      firstFailure = failure;
  }
  if (!chosen)
    return makeStatus(DYNRT_INVALID_ARGUMENT, firstFailure);
  const auto &spec = *chosen->spec;
  for (auto &o : spec.outputs)
    for (int64_t d : o.shape)
      if (d < 0)
        return makeStatus(DYNRT_UNIMPLEMENTED,
                          "output '" + o.name +
                              "' has a dynamic shape; this "
                              "runtime allocates static output shapes only");
  // Small graphs keep the argument list on the stack.
  std::vector<void *> args(spec.inputs.size());
  for (size_t i = 0; i < numInputs; ++i)
    args[i] = static_cast<char *>(inputs[i]->data) + inputs[i]->byte_offset;
  std::copy(chosen->weightPtrs.begin(), chosen->weightPtrs.end(),
            args.begin() + numInputs);
  std::vector<void *> outPtrs(numOutputs);
  for (size_t i = 0; i < numOutputs; ++i) {
    outputs[i] = allocOutput(spec.outputs[i]);
    if (!outputs[i]) {
      for (size_t j = 0; j < i; ++j)
        deleteManaged(outputs[j]), outputs[j] = nullptr;
      return makeStatus(DYNRT_RESOURCE_EXHAUSTED,
                        "cannot allocate output " + std::to_string(i));
    }
    outPtrs[i] = outputs[i]->dl_tensor.data;
  }
  if (int rc = chosen->fn(args.data(), outPtrs.data())) {
    for (size_t i = 0; i < numOutputs; ++i)
      deleteManaged(outputs[i]), outputs[i] = nullptr;
    return makeStatus(DYNRT_INTERNAL, "graph '" + spec.name +
                                          "' failed with code " +
                                          std::to_string(rc));
  }
  return nullptr;
}
} // namespace

extern "C" dynrt_status_t *dynrt_model_load(const char *path,
                                            dynrt_model_t **out_model) {
  try {
    return load(path, out_model);
  } catch (const std::exception &e) {
    return makeStatus(DYNRT_INTERNAL,
                      std::string("dynrt_model_load: ") + e.what());
  }
}

extern "C" void dynrt_model_release(dynrt_model_t *model) { delete model; }

extern "C" const char *dynrt_model_manifest(const dynrt_model_t *model) {
  return model ? model->manifestText.c_str() : "";
}

extern "C" size_t dynrt_model_num_inputs(const dynrt_model_t *model) {
  return model ? model->manifest.graphs.front().numUserInputs : 0;
}

extern "C" size_t dynrt_model_num_outputs(const dynrt_model_t *model) {
  return model ? model->manifest.graphs.front().outputs.size() : 0;
}

extern "C" dynrt_status_t *dynrt_model_run(dynrt_model_t *model,
                                           const DLTensor *const *inputs,
                                           size_t num_inputs,
                                           DLManagedTensor **outputs,
                                           size_t num_outputs) {
  try {
    return run(model, inputs, num_inputs, outputs, num_outputs);
  } catch (const std::exception &e) {
    return makeStatus(DYNRT_INTERNAL,
                      std::string("dynrt_model_run: ") + e.what());
  }
}
