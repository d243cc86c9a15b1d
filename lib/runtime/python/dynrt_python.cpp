//===- dynrt_python.cpp - the _dynrt extension: libdynrt from Python ------===//
//
// `dynoc.load(path)` (python/dynoc/_runtime.py) wraps this module's Model.
// Tensors cross as DLPack capsules, zero copy in both directions; the GIL is
// released while a model runs, so Python threads run models concurrently.
//
//===----------------------------------------------------------------------===//
#include "dynrt/dynrt.hpp"

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace py = pybind11;

namespace {
// Exceptions raised for runtime errors; GuardError for a failed guard.
PyObject *errorType = nullptr;
PyObject *guardErrorType = nullptr;

[[noreturn]] void raise(const dynrt::Error &e) {
  std::string msg = e.what();
  bool guard =
      e.code() == DYNRT_INVALID_ARGUMENT && msg.rfind("guard failed", 0) == 0;
  PyErr_SetString(guard ? guardErrorType : errorType, msg.c_str());
  throw py::error_already_set();
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

dynrt::Model loadModel(const std::string &path) {
  try {
    return dynrt::Model(path);
  } catch (const dynrt::Error &e) {
    raise(e);
  }
}

/// A loaded model with a pool of contexts, one per concurrent caller.
class Model {
public:
  explicit Model(const std::string &path) : model_(loadModel(path)) {}

  std::string manifest() const { return model_.manifest(); }

  /// Runs on DLPack capsules (the producers keep ownership); returns one
  /// capsule per output.
  py::list run(const std::vector<py::capsule> &inputs) {
    std::vector<const DLTensor *> in;
    for (const py::capsule &c : inputs) {
      if (std::string(c.name() ? c.name() : "") != "dltensor")
        throw py::value_error("expected DLPack capsules named 'dltensor'");
      in.push_back(&static_cast<DLManagedTensor *>(c.get_pointer())->dl_tensor);
    }
    std::unique_ptr<dynrt::Context> context = acquire();
    std::vector<dynrt::Tensor> out;
    std::optional<dynrt::Error> error;
    {
      py::gil_scoped_release noGil;
      try {
        out = context->run(in);
      } catch (const dynrt::Error &e) {
        error = e;
      }
    }
    release(std::move(context));
    if (error)
      raise(*error);
    py::list result;
    for (dynrt::Tensor &t : out) {
      PyObject *cap = PyCapsule_New(t.get(), "dltensor", deleteUnconsumed);
      if (!cap)
        throw py::error_already_set();
      t.release(); // the capsule owns it now
      result.append(py::reinterpret_steal<py::object>(cap));
    }
    return result;
  }

private:
  std::unique_ptr<dynrt::Context> acquire() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!pool_.empty()) {
        auto c = std::move(pool_.back());
        pool_.pop_back();
        return c;
      }
    }
    try {
      return std::make_unique<dynrt::Context>(model_);
    } catch (const dynrt::Error &e) {
      raise(e);
    }
  }
  void release(std::unique_ptr<dynrt::Context> c) {
    std::lock_guard<std::mutex> lock(mu_);
    pool_.push_back(std::move(c));
  }

  dynrt::Model model_;
  std::mutex mu_; // guards pool_ only; runs take no lock
  std::vector<std::unique_ptr<dynrt::Context>> pool_;
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
