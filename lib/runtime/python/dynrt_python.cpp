//===- dynrt_python.cpp - the _dynrt extension: libdynrt from Python ------===//
//
// `dynoc.load(path)` (python/dynoc/_runtime.py) wraps this module's Model.
// Tensors cross as DLPack capsules, zero copy in both directions; the GIL is
// released while a model runs, so Python threads run models concurrently.
//
//===----------------------------------------------------------------------===//
#include "dynrt/dynrt.h"

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace py = pybind11;

namespace {
// Exceptions raised for runtime errors; GuardError for a failed guard.
PyObject *errorType = nullptr;
PyObject *guardErrorType = nullptr;

[[noreturn]] void raise(dynrt_status_t *status) {
  std::string msg = dynrt_status_message(status);
  bool guard = dynrt_status_code(status) == DYNRT_INVALID_ARGUMENT &&
               msg.rfind("guard failed", 0) == 0;
  dynrt_status_free(status);
  PyErr_SetString(guard ? guardErrorType : errorType, msg.c_str());
  throw py::error_already_set();
}

void check(dynrt_status_t *status) {
  if (status)
    raise(status);
}

// A capsule's destructor: frees the tensor unless a consumer (torch's
// from_dlpack renames the capsule to "used_dltensor") took it.
void deleteUnconsumed(PyObject *capsule) {
  if (PyCapsule_IsValid(capsule, "dltensor")) {
    auto *t =
        static_cast<DLManagedTensor *>(PyCapsule_GetPointer(capsule, "dltensor"));
    if (t && t->deleter)
      t->deleter(t);
  } else {
    PyErr_Clear();
  }
}

/// A loaded model with a pool of contexts, one per concurrent caller.
class Model {
public:
  explicit Model(const std::string &path) {
    dynrt_model_t *m = nullptr;
    check(dynrt_model_load(path.c_str(), &m));
    model_.reset(m);
  }
  ~Model() {
    for (dynrt_context_t *c : pool_)
      dynrt_context_release(c);
  }

  std::string manifest() const { return dynrt_model_manifest(model_.get()); }

  /// Runs on DLPack capsules (the producers keep ownership); returns one
  /// capsule per output.
  py::list run(const std::vector<py::capsule> &inputs) {
    std::vector<const DLTensor *> in;
    for (const py::capsule &c : inputs) {
      if (std::string(c.name() ? c.name() : "") != "dltensor")
        throw py::value_error("expected DLPack capsules named 'dltensor'");
      in.push_back(&static_cast<DLManagedTensor *>(c.get_pointer())->dl_tensor);
    }
    size_t n = dynrt_model_num_outputs(model_.get());
    std::vector<DLManagedTensor *> out(n, nullptr);
    dynrt_context_t *context = acquire();
    dynrt_status_t *status;
    {
      py::gil_scoped_release noGil;
      status = dynrt_context_run(context, in.data(), in.size(), out.data(), n);
    }
    release(context);
    check(status);
    py::list result;
    for (DLManagedTensor *t : out) {
      PyObject *cap = PyCapsule_New(t, "dltensor", deleteUnconsumed);
      if (!cap) {
        t->deleter(t);
        throw py::error_already_set();
      }
      result.append(py::reinterpret_steal<py::object>(cap));
    }
    return result;
  }

private:
  dynrt_context_t *acquire() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!pool_.empty()) {
        dynrt_context_t *c = pool_.back();
        pool_.pop_back();
        return c;
      }
    }
    dynrt_context_t *c = nullptr;
    check(dynrt_context_create(model_.get(), {kDLCPU, 0}, nullptr, &c));
    return c;
  }
  void release(dynrt_context_t *c) {
    std::lock_guard<std::mutex> lock(mu_);
    pool_.push_back(c);
  }

  struct Release {
    void operator()(dynrt_model_t *m) const { dynrt_model_release(m); }
  };
  std::unique_ptr<dynrt_model_t, Release> model_;
  std::mutex mu_; // guards pool_ only; runs take no lock
  std::vector<dynrt_context_t *> pool_;
};
} // namespace

PYBIND11_MODULE(_dynrt, m) {
  m.doc() = "libdynrt bindings; use dynoc.load()";
  errorType = PyErr_NewException("_dynrt.Error", PyExc_RuntimeError, nullptr);
  guardErrorType = PyErr_NewException("_dynrt.GuardError", errorType, nullptr);
  m.attr("Error") = py::handle(errorType);
  m.attr("GuardError") = py::handle(guardErrorType);
  py::class_<Model>(m, "Model")
      .def(py::init<const std::string &>(), py::arg("path"))
      .def_property_readonly("manifest", &Model::manifest)
      .def("run", &Model::run, py::arg("inputs"));
}
