//===- dynrt_python.cpp - the _dynrt extension: libdynrt from Python ------===//
//
// `dynoc.load(path)` (python/dynoc/runtime/model.py) wraps this module's Model.
// Tensors cross as DLPack capsules, zero copy in both directions; the GIL is
// released while a model runs, so Python threads run models concurrently.
// Written against CPython's stable ABI (Py_LIMITED_API 3.11): one build
// imports in Python 3.11 and later (the GPU machine has 3.12).
//
//===----------------------------------------------------------------------===//
#include "dynrt/dynrt.h"

#include <Python.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace {
// Exceptions raised for runtime errors; GuardError for a failed guard.
PyObject *errorType = nullptr;
PyObject *guardErrorType = nullptr;

/// Raises `s` (and frees it); returns NULL for the caller to return.
PyObject *raise(dynrt_status_t *s) {
  std::string msg = dynrt_status_message(s);
  bool guard = dynrt_status_code(s) == DYNRT_INVALID_ARGUMENT &&
               msg.rfind("guard failed", 0) == 0;
  dynrt_status_free(s);
  PyErr_SetString(guard ? guardErrorType : errorType, msg.c_str());
  return nullptr;
}

// A capsule's destructor: frees the tensor unless a consumer (torch's
// from_dlpack renames the capsule to "used_dltensor") took it.
void deleteUnconsumed(PyObject *capsule) {
  if (PyCapsule_IsValid(capsule, "dltensor")) {
    auto *t = static_cast<DLManagedTensor *>(
        PyCapsule_GetPointer(capsule, "dltensor"));
    if (t && t->deleter)
      t->deleter(t);
  } else {
    PyErr_Clear();
  }
}

/// The DLTensors of a sequence of capsules named "dltensor" (their
/// producers keep ownership). False with a Python error set otherwise.
bool tensorsOf(PyObject *seq, const char *what,
               std::vector<const DLTensor *> &out) {
  PyObject *fast = PySequence_Fast(seq, "expected a list of DLPack capsules");
  if (!fast)
    return false;
  Py_ssize_t n = PySequence_Size(fast);
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject *c = PySequence_GetItem(fast, i);
    void *p = c && PyCapsule_IsValid(c, "dltensor")
                  ? PyCapsule_GetPointer(c, "dltensor")
                  : nullptr;
    Py_XDECREF(c);
    if (!p) {
      Py_DECREF(fast);
      PyErr_Format(PyExc_ValueError,
                   "%s %zd: expected a DLPack capsule named 'dltensor'", what,
                   i);
      return false;
    }
    out.push_back(&static_cast<DLManagedTensor *>(p)->dl_tensor);
  }
  Py_DECREF(fast);
  return true;
}

struct ContextRelease {
  void operator()(dynrt_context_t *c) const { dynrt_context_release(c); }
};
using ContextPtr = std::unique_ptr<dynrt_context_t, ContextRelease>;

/// A loaded model with a pool of contexts (one per concurrent caller, each
/// bound to the stream it was made for).
struct Model {
  dynrt_model_t *model = nullptr;
  std::mutex mu; // guards pool only; runs take no lock
  std::vector<std::pair<uintptr_t, ContextPtr>> pool;
  bool cudaGraphs = true;
  /// The context of call(): a bundled model's functions read each other's
  /// outputs from it, so every call() shares it (one at a time).
  std::mutex callMu;
  ContextPtr callContext;

  ~Model() {
    callContext.reset();
    pool.clear();
    if (model)
      dynrt_model_release(model);
  }
  dynrt_status_t *acquire(uintptr_t stream, ContextPtr &out) {
    {
      std::lock_guard<std::mutex> lock(mu);
      for (size_t i = 0; i < pool.size(); ++i)
        if (pool[i].first == stream) {
          out = std::move(pool[i].second);
          pool.erase(pool.begin() + i);
          return nullptr;
        }
    }
    dynrt_context_t *c = nullptr;
    if (dynrt_status_t *s =
            dynrt_context_create(model, dynrt_model_device(model),
                                 reinterpret_cast<void *>(stream), &c))
      return s;
    out.reset(c);
    if (!cudaGraphs)
      return dynrt_context_set_cuda_graphs(c, 0);
    return nullptr;
  }
  void release(uintptr_t stream, ContextPtr c) {
    std::lock_guard<std::mutex> lock(mu);
    pool.emplace_back(stream, std::move(c));
  }
  /// Calls `f(context)` with a pooled context for `stream`, the GIL released
  /// (the caller holds it on entry and on return).
  template <class F> dynrt_status_t *withContext(uintptr_t stream, F f) {
    ContextPtr c;
    dynrt_status_t *s;
    Py_BEGIN_ALLOW_THREADS s = acquire(stream, c);
    if (!s)
      s = f(c.get());
    Py_END_ALLOW_THREADS if (c) release(stream, std::move(c));
    return s;
  }
};

struct ModelObject {
  PyObject_HEAD Model *impl;
};

int modelInit(PyObject *self, PyObject *args, PyObject *) {
  const char *path, *weights = nullptr;
  if (!PyArg_ParseTuple(args, "s|z", &path, &weights))
    return -1;
  auto *o = reinterpret_cast<ModelObject *>(self);
  auto impl = std::make_unique<Model>();
  dynrt_status_t *s;
  // Another weights file (checked against the manifest), or the sidecar.
  Py_BEGIN_ALLOW_THREADS s =
      weights ? dynrt_model_load_with_weights(path, weights, &impl->model)
              : dynrt_model_load(path, &impl->model);
  Py_END_ALLOW_THREADS if (s) {
    raise(s);
    return -1;
  }
  delete o->impl;
  o->impl = impl.release();
  return 0;
}

void modelDealloc(PyObject *self) {
  auto *o = reinterpret_cast<ModelObject *>(self);
  delete o->impl;
  PyTypeObject *type = Py_TYPE(self);
  auto *free = reinterpret_cast<freefunc>(PyType_GetSlot(type, Py_tp_free));
  free(self);
  Py_DECREF(type);
}

Model *implOf(PyObject *self) {
  Model *m = reinterpret_cast<ModelObject *>(self)->impl;
  if (!m)
    PyErr_SetString(PyExc_RuntimeError, "_dynrt.Model is not loaded");
  return m;
}

/// run(inputs, stream=0): outputs allocated by the runtime, as capsules.
PyObject *modelRun(PyObject *self, PyObject *args) {
  PyObject *inputs;
  unsigned long long stream = 0;
  Model *m = implOf(self);
  if (!m || !PyArg_ParseTuple(args, "O|K", &inputs, &stream))
    return nullptr;
  std::vector<const DLTensor *> in;
  if (!tensorsOf(inputs, "input", in))
    return nullptr;
  size_t numOutputs = dynrt_model_num_outputs(m->model);
  std::vector<DLManagedTensor *> out(numOutputs, nullptr);
  if (dynrt_status_t *s = m->withContext(stream, [&](dynrt_context_t *c) {
        return dynrt_context_run(c, in.data(), in.size(), out.data(),
                                 out.size());
      }))
    return raise(s);
  PyObject *result = PyList_New(0);
  for (size_t i = 0; i < out.size(); ++i) {
    PyObject *cap = PyCapsule_New(out[i], "dltensor", deleteUnconsumed);
    if (!cap || PyList_Append(result, cap) != 0) {
      Py_XDECREF(cap);
      for (size_t k = i + (cap ? 1 : 0); k < out.size(); ++k)
        out[k]->deleter(out[k]);
      Py_DECREF(result);
      return nullptr;
    }
    Py_DECREF(cap);
  }
  return result;
}

/// output_shapes(inputs, stream=0): the shapes the outputs will have.
PyObject *modelOutputShapes(PyObject *self, PyObject *args) {
  PyObject *inputs;
  unsigned long long stream = 0;
  Model *m = implOf(self);
  if (!m || !PyArg_ParseTuple(args, "O|K", &inputs, &stream))
    return nullptr;
  std::vector<const DLTensor *> in;
  if (!tensorsOf(inputs, "input", in))
    return nullptr;
  size_t numOutputs = dynrt_model_num_outputs(m->model);
  std::vector<std::vector<int64_t>> shapes(numOutputs);
  std::vector<int64_t *> ptrs;
  for (size_t i = 0; i < numOutputs; ++i) {
    shapes[i].resize(std::max(dynrt_model_output_ndim(m->model, i), 1));
    ptrs.push_back(shapes[i].data());
  }
  if (dynrt_status_t *s = m->withContext(stream, [&](dynrt_context_t *c) {
        return dynrt_context_output_shapes(c, in.data(), in.size(), ptrs.data(),
                                           numOutputs);
      }))
    return raise(s);
  PyObject *result = PyList_New(0);
  for (size_t i = 0; i < numOutputs; ++i) {
    int ndim = dynrt_model_output_ndim(m->model, i);
    PyObject *t = PyTuple_New(ndim);
    for (int d = 0; d < ndim; ++d)
      PyTuple_SetItem(t, d, PyLong_FromLongLong(shapes[i][d]));
    PyList_Append(result, t);
    Py_DECREF(t);
  }
  return result;
}

/// run_into(inputs, outputs, stream=0): into caller buffers.
PyObject *modelRunInto(PyObject *self, PyObject *args) {
  PyObject *inputs, *outputs;
  unsigned long long stream = 0;
  Model *m = implOf(self);
  if (!m || !PyArg_ParseTuple(args, "OO|K", &inputs, &outputs, &stream))
    return nullptr;
  std::vector<const DLTensor *> in, out;
  if (!tensorsOf(inputs, "input", in) || !tensorsOf(outputs, "output", out))
    return nullptr;
  if (dynrt_status_t *s = m->withContext(stream, [&](dynrt_context_t *c) {
        return dynrt_context_run_into(c, in.data(), in.size(), out.data(),
                                      out.size());
      }))
    return raise(s);
  Py_RETURN_NONE;
}

/// A host copy of a CPU tensor the runtime keeps, owned by its capsule.
DLManagedTensor *hostCopy(const DLTensor *t) {
  size_t bytes = (t->dtype.bits * t->dtype.lanes + 7) / 8;
  for (int d = 0; d < t->ndim; ++d)
    bytes *= size_t(t->shape[d]);
  auto *m = new DLManagedTensor();
  auto *shape = new int64_t[t->ndim + 1];
  std::copy(t->shape, t->shape + t->ndim, shape);
  void *data = std::malloc(bytes ? bytes : 1);
  std::memcpy(data, static_cast<const char *>(t->data) + t->byte_offset, bytes);
  m->dl_tensor =
      DLTensor{data, t->device, t->ndim, t->dtype, shape, nullptr, 0};
  m->deleter = [](DLManagedTensor *self) {
    std::free(self->dl_tensor.data);
    delete[] self->dl_tensor.shape;
    delete self;
  };
  return m;
}

/// call(function, inputs) -> list of DLPack capsules: a bundled model's
/// function (dynrt_context_call) on the model's call context; the outputs
/// are copies (the context keeps its own for the functions that read them).
PyObject *modelCall(PyObject *self, PyObject *args) {
  const char *function;
  PyObject *inputs;
  Model *m = implOf(self);
  if (!m || !PyArg_ParseTuple(args, "sO", &function, &inputs))
    return nullptr;
  if (dynrt_model_device(m->model).device_type != kDLCPU) {
    PyErr_SetString(errorType, "call() runs CPU models only so far");
    return nullptr;
  }
  std::vector<const DLTensor *> in;
  if (!tensorsOf(inputs, "input", in))
    return nullptr;
  size_t numIn = 0, numOut = 0;
  if (dynrt_status_t *s =
          dynrt_model_function_arity(m->model, function, &numIn, &numOut))
    return raise(s);
  std::vector<const DLTensor *> out(numOut, nullptr);
  std::vector<DLManagedTensor *> copies;
  dynrt_status_t *s = nullptr;
  Py_BEGIN_ALLOW_THREADS {
    std::lock_guard<std::mutex> lock(m->callMu);
    if (!m->callContext) {
      dynrt_context_t *c = nullptr;
      s = dynrt_context_create(m->model, dynrt_model_device(m->model), nullptr,
                               &c);
      m->callContext.reset(c);
    }
    if (!s)
      s = dynrt_context_call(m->callContext.get(), function, in.data(),
                             in.size(), out.data(), out.size());
    if (!s)
      for (const DLTensor *t : out)
        copies.push_back(hostCopy(t));
  }
  Py_END_ALLOW_THREADS if (s) return raise(s);
  PyObject *result = PyList_New(0);
  for (size_t i = 0; i < copies.size(); ++i) {
    PyObject *cap = PyCapsule_New(copies[i], "dltensor", deleteUnconsumed);
    if (!cap || PyList_Append(result, cap) != 0) {
      Py_XDECREF(cap);
      for (size_t k = i + (cap ? 1 : 0); k < copies.size(); ++k)
        copies[k]->deleter(copies[k]);
      Py_DECREF(result);
      return nullptr;
    }
    Py_DECREF(cap);
  }
  return result;
}

/// functions() -> [(name, [input names the caller gives])].
PyObject *modelFunctions(PyObject *self, PyObject *) {
  Model *m = implOf(self);
  if (!m)
    return nullptr;
  PyObject *result = PyList_New(0);
  for (size_t i = 0, n = dynrt_model_num_functions(m->model); i < n; ++i) {
    const char *name = dynrt_model_function_name(m->model, i);
    size_t numIn = 0, numOut = 0;
    if (dynrt_status_t *s =
            dynrt_model_function_arity(m->model, name, &numIn, &numOut)) {
      Py_DECREF(result);
      return raise(s);
    }
    PyObject *names = PyList_New(0);
    for (size_t k = 0; k < numIn; ++k) {
      PyObject *n = PyUnicode_FromString(
          dynrt_model_function_input_name(m->model, name, k));
      PyList_Append(names, n);
      Py_XDECREF(n);
    }
    PyObject *entry = Py_BuildValue("(sN)", name, names);
    PyList_Append(result, entry);
    Py_XDECREF(entry);
  }
  return result;
}

PyObject *modelManifest(PyObject *self, PyObject *) {
  Model *m = implOf(self);
  return m ? PyUnicode_FromString(dynrt_model_manifest(m->model)) : nullptr;
}

/// (DLPack device type, device id).
PyObject *modelDevice(PyObject *self, PyObject *) {
  Model *m = implOf(self);
  if (!m)
    return nullptr;
  DLDevice d = dynrt_model_device(m->model);
  return Py_BuildValue("(ii)", int(d.device_type), int(d.device_id));
}

PyObject *modelSetCudaGraphs(PyObject *self, PyObject *args) {
  int enabled;
  Model *m = implOf(self);
  if (!m || !PyArg_ParseTuple(args, "p", &enabled))
    return nullptr;
  std::lock_guard<std::mutex> lock(m->mu);
  m->cudaGraphs = enabled;
  for (auto &[stream, c] : m->pool)
    if (dynrt_status_t *s = dynrt_context_set_cuda_graphs(c.get(), enabled))
      return raise(s);
  Py_RETURN_NONE;
}

/// set_communicator(address or None): binds the dynrt_communicator_t at
/// `address` (which the caller keeps alive; dynoc's
/// TorchDistributedCommunicator) to the model.
PyObject *modelSetCommunicator(PyObject *self, PyObject *args) {
  PyObject *address;
  Model *m = implOf(self);
  if (!m || !PyArg_ParseTuple(args, "O", &address))
    return nullptr;
  const dynrt_communicator_t *c = nullptr;
  if (address != Py_None) {
    c = static_cast<const dynrt_communicator_t *>(PyLong_AsVoidPtr(address));
    if (!c && PyErr_Occurred())
      return nullptr;
  }
  std::lock_guard<std::mutex> lock(m->mu);
  if (dynrt_status_t *s = dynrt_model_set_communicator(m->model, c))
    return raise(s);
  Py_RETURN_NONE;
}

/// weight_names() -> list of str.
PyObject *modelWeightNames(PyObject *self, PyObject *) {
  Model *m = implOf(self);
  if (!m)
    return nullptr;
  PyObject *result = PyList_New(0);
  for (size_t i = 0, n = dynrt_model_num_weights(m->model); result && i < n;
       ++i) {
    PyObject *name = PyUnicode_FromString(dynrt_model_weight_name(m->model, i));
    if (!name || PyList_Append(result, name) != 0)
      Py_CLEAR(result);
    Py_XDECREF(name);
  }
  return result;
}

/// read_weight(name) -> DLPack capsule (a copy of its current value).
PyObject *modelReadWeight(PyObject *self, PyObject *args) {
  const char *name;
  Model *m = implOf(self);
  if (!m || !PyArg_ParseTuple(args, "s", &name))
    return nullptr;
  DLManagedTensor *t = nullptr;
  dynrt_status_t *s;
  Py_BEGIN_ALLOW_THREADS s = dynrt_model_read_weight(m->model, name, &t);
  Py_END_ALLOW_THREADS if (s) return raise(s);
  PyObject *cap = PyCapsule_New(t, "dltensor", deleteUnconsumed);
  if (!cap)
    t->deleter(t);
  return cap;
}

/// write_weight(name, capsule) / bind_weight(name, capsule).
template <dynrt_status_t *(*Fn)(dynrt_model_t *, const char *,
                                const DLTensor *)>
PyObject *modelSetWeight(PyObject *self, PyObject *args) {
  const char *name;
  PyObject *value;
  Model *m = implOf(self);
  if (!m || !PyArg_ParseTuple(args, "sO", &name, &value))
    return nullptr;
  PyObject *one = PyTuple_Pack(1, value);
  std::vector<const DLTensor *> in;
  bool ok = one && tensorsOf(one, "value", in);
  Py_XDECREF(one);
  if (!ok)
    return nullptr;
  dynrt_status_t *s;
  Py_BEGIN_ALLOW_THREADS s = Fn(m->model, name, in[0]);
  Py_END_ALLOW_THREADS if (s) return raise(s);
  Py_RETURN_NONE;
}

/// save_weights(path) / load_weights(path): safetensors checkpoints.
template <dynrt_status_t *(*Fn)(dynrt_model_t *, const char *)>
PyObject *modelCheckpoint(PyObject *self, PyObject *args) {
  const char *path;
  Model *m = implOf(self);
  if (!m || !PyArg_ParseTuple(args, "s", &path))
    return nullptr;
  dynrt_status_t *s;
  Py_BEGIN_ALLOW_THREADS s = Fn(m->model, path);
  Py_END_ALLOW_THREADS if (s) return raise(s);
  Py_RETURN_NONE;
}

PyMethodDef modelMethods[] = {
    {"weight_names", modelWeightNames, METH_NOARGS,
     "weight_names() -> the names of the model's weights"},
    {"read_weight", modelReadWeight, METH_VARARGS,
     "read_weight(name) -> DLPack capsule of its current value"},
    {"write_weight", modelSetWeight<dynrt_model_write_weight>, METH_VARARGS,
     "write_weight(name, capsule): sets a weight for later runs"},
    {"bind_weight", modelSetWeight<dynrt_model_bind_weight>, METH_VARARGS,
     "bind_weight(name, capsule): the weight lives in that memory (the "
     "caller keeps it alive)"},
    {"save_weights", modelCheckpoint<dynrt_model_save_weights>, METH_VARARGS,
     "save_weights(path): every weight to a safetensors checkpoint"},
    {"load_weights", modelCheckpoint<dynrt_model_load_weights>, METH_VARARGS,
     "load_weights(path): restores a safetensors checkpoint"},
    {"run", modelRun, METH_VARARGS,
     "run(inputs, stream=0) -> list of DLPack capsules"},
    {"output_shapes", modelOutputShapes, METH_VARARGS,
     "output_shapes(inputs, stream=0) -> list of shape tuples"},
    {"run_into", modelRunInto, METH_VARARGS,
     "run_into(inputs, outputs, stream=0): into caller buffers"},
    {"call", modelCall, METH_VARARGS,
     "call(function, inputs) -> list of DLPack capsules (copies)"},
    {"functions", modelFunctions, METH_NOARGS,
     "functions() -> [(name, [the caller's input names])]"},
    {"manifest", modelManifest, METH_NOARGS, "the embedded manifest (JSON)"},
    {"device", modelDevice, METH_NOARGS, "(DLPack device type, device id)"},
    {"set_communicator", modelSetCommunicator, METH_VARARGS,
     "set_communicator(address or None): the dynrt_communicator_t the "
     "model's collectives run through"},
    {"set_cuda_graphs", modelSetCudaGraphs, METH_VARARGS,
     "set_cuda_graphs(enabled): capture and replay CUDA graphs"},
    {nullptr, nullptr, 0, nullptr}};

PyType_Slot modelSlots[] = {
    {Py_tp_init, reinterpret_cast<void *>(modelInit)},
    {Py_tp_dealloc, reinterpret_cast<void *>(modelDealloc)},
    {Py_tp_methods, modelMethods},
    {Py_tp_doc, const_cast<char *>("A model .so loaded by libdynrt.")},
    {0, nullptr}};

PyType_Spec modelSpec = {"_dynrt.Model", sizeof(ModelObject), 0,
                         Py_TPFLAGS_DEFAULT, modelSlots};

PyObject *profileStart(PyObject *, PyObject *args) {
  const char *path;
  if (!PyArg_ParseTuple(args, "s", &path))
    return nullptr;
  if (dynrt_status_t *s = dynrt_profile_start(path))
    return raise(s);
  Py_RETURN_NONE;
}

PyObject *profileStop(PyObject *, PyObject *) {
  dynrt_status_t *s;
  Py_BEGIN_ALLOW_THREADS s = dynrt_profile_stop();
  Py_END_ALLOW_THREADS if (s) return raise(s);
  Py_RETURN_NONE;
}

// The Python callable libdynrt's log messages go to (set_log_callback).
PyObject *logCallable = nullptr;

// libdynrt calls it from any thread, the GIL held or not.
void logToPython(void *, dynrt_log_level_t level, const char *message) {
  PyGILState_STATE gil = PyGILState_Ensure();
  if (logCallable) {
    PyObject *r = PyObject_CallFunction(logCallable, "is", int(level), message);
    if (!r)
      PyErr_WriteUnraisable(logCallable);
    Py_XDECREF(r);
  }
  PyGILState_Release(gil);
}

PyObject *setLogCallback(PyObject *, PyObject *args) {
  PyObject *callable;
  int level = DYNRT_LOG_INFO;
  if (!PyArg_ParseTuple(args, "O|i", &callable, &level))
    return nullptr;
  if (callable != Py_None && !PyCallable_Check(callable)) {
    PyErr_SetString(PyExc_TypeError, "set_log_callback: expected a callable");
    return nullptr;
  }
  // Swapped while libdynrt holds no reference to the old one.
  dynrt_set_log_callback(nullptr, nullptr, DYNRT_LOG_OFF);
  Py_XDECREF(logCallable);
  logCallable = callable == Py_None ? nullptr : Py_NewRef(callable);
  if (logCallable)
    dynrt_set_log_callback(logToPython, nullptr,
                           static_cast<dynrt_log_level_t>(level));
  Py_RETURN_NONE;
}

/// nccl_unique_id() -> bytes: the id every rank's nccl_communicator takes.
PyObject *ncclUniqueId(PyObject *, PyObject *) {
  uint8_t id[DYNRT_NCCL_UNIQUE_ID_BYTES];
  if (dynrt_status_t *s = dynrt_nccl_unique_id(id))
    return raise(s);
  return PyBytes_FromStringAndSize(reinterpret_cast<const char *>(id),
                                   sizeof id);
}

/// nccl_communicator(id, size, rank, device, group, timeout_ms) -> the
/// address of a dynrt_communicator_t (free it with nccl_communicator_free).
/// Every rank's call waits for the others: the GIL is released meanwhile.
PyObject *ncclCommunicator(PyObject *, PyObject *args) {
  PyObject *idObject;
  const char *group;
  char *id;
  Py_ssize_t idBytes;
  int size, rank, device, timeoutMs;
  if (!PyArg_ParseTuple(args, "Siiisi", &idObject, &size, &rank, &device,
                        &group, &timeoutMs) ||
      PyBytes_AsStringAndSize(idObject, &id, &idBytes) != 0)
    return nullptr;
  if (idBytes != DYNRT_NCCL_UNIQUE_ID_BYTES) {
    PyErr_Format(PyExc_ValueError, "an NCCL unique id has %d bytes, not %zd",
                 DYNRT_NCCL_UNIQUE_ID_BYTES, idBytes);
    return nullptr;
  }
  dynrt_communicator_t *c = nullptr;
  dynrt_status_t *s;
  Py_BEGIN_ALLOW_THREADS s =
      dynrt_nccl_communicator_create(reinterpret_cast<const uint8_t *>(id),
                                     size, rank, device, group, timeoutMs, &c);
  Py_END_ALLOW_THREADS if (s) return raise(s);
  return PyLong_FromVoidPtr(c);
}

template <void (*Free)(dynrt_communicator_t *)>
PyObject *communicatorFree(PyObject *, PyObject *args) {
  PyObject *address;
  if (!PyArg_ParseTuple(args, "O", &address))
    return nullptr;
  auto *c = static_cast<dynrt_communicator_t *>(PyLong_AsVoidPtr(address));
  if (!c && PyErr_Occurred())
    return nullptr;
  Py_BEGIN_ALLOW_THREADS Free(c);
  Py_END_ALLOW_THREADS Py_RETURN_NONE;
}

PyObject *glooCommunicator(PyObject *, PyObject *args) {
  const char *store, *group, *hostname;
  int size, rank, timeoutMs;
  if (!PyArg_ParseTuple(args, "siiszi", &store, &size, &rank, &group, &hostname,
                        &timeoutMs))
    return nullptr;
  dynrt_communicator_t *c = nullptr;
  dynrt_status_t *s;
  Py_BEGIN_ALLOW_THREADS s = dynrt_gloo_communicator_create(
      store, size, rank, group, hostname, timeoutMs, &c);
  Py_END_ALLOW_THREADS if (s) return raise(s);
  return PyLong_FromVoidPtr(c);
}

PyMethodDef moduleMethods[] = {
    {"nccl_unique_id", ncclUniqueId, METH_NOARGS,
     "nccl_unique_id() -> bytes (dynrt_nccl_unique_id)"},
    {"nccl_communicator", ncclCommunicator, METH_VARARGS,
     "nccl_communicator(id, size, rank, device, group, timeout_ms) -> address "
     "(dynrt_nccl_communicator_create)"},
    {"nccl_communicator_free", communicatorFree<dynrt_nccl_communicator_free>,
     METH_VARARGS, "nccl_communicator_free(address)"},
    {"gloo_communicator", glooCommunicator, METH_VARARGS,
     "gloo_communicator(store, size, rank, group, hostname or None, "
     "timeout_ms) -> address (dynrt_gloo_communicator_create)"},
    {"gloo_communicator_free", communicatorFree<dynrt_gloo_communicator_free>,
     METH_VARARGS, "gloo_communicator_free(address)"},
    {"profile_start", profileStart, METH_VARARGS,
     "profile_start(path): record a trace of model runs (dynrt.h)"},
    {"profile_stop", profileStop, METH_NOARGS,
     "profile_stop(): stop recording and write the trace"},
    {"set_log_callback", setLogCallback, METH_VARARGS,
     "set_log_callback(fn(level, message) or None, min_level=1)"},
    {nullptr, nullptr, 0, nullptr}};

PyModuleDef moduleDef = {PyModuleDef_HEAD_INIT,
                         "_dynrt",
                         "libdynrt bindings; use dynoc.load()",
                         -1,
                         moduleMethods,
                         nullptr,
                         nullptr,
                         nullptr,
                         nullptr};
} // namespace

PyMODINIT_FUNC PyInit__dynrt(void) {
  PyObject *m = PyModule_Create(&moduleDef);
  if (!m)
    return nullptr;
  errorType = PyErr_NewException("_dynrt.Error", PyExc_RuntimeError, nullptr);
  guardErrorType = PyErr_NewException("_dynrt.GuardError", errorType, nullptr);
  PyObject *type = PyType_FromSpec(&modelSpec);
  if (!errorType || !guardErrorType || !type ||
      PyModule_AddObject(m, "Error", Py_NewRef(errorType)) != 0 ||
      PyModule_AddObject(m, "GuardError", Py_NewRef(guardErrorType)) != 0 ||
      PyModule_AddObject(m, "Model", type) != 0) {
    Py_XDECREF(type);
    Py_DECREF(m);
    return nullptr;
  }
  return m;
}
