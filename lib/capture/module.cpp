//===- module.cpp - the _dynoc_C extension module -------------------------===//
#include "evaluator.h"
#include "frame_hook.h"

namespace {
using namespace dynoc::capture;

// init(tensor_type, module_type, inline_cache_entries, follow, forward_of)
PyObject *init(PyObject *, PyObject *args) {
  PyObject *tensorType, *moduleType, *caches, *follow, *forwardOf;
  if (!PyArg_ParseTuple(args, "O!OOOO", &PyType_Type, &tensorType, &moduleType,
                        &caches, &follow, &forwardOf))
    return nullptr;
  Runtime &rt = runtime();
  Py_INCREF(tensorType), Py_INCREF(moduleType), Py_INCREF(follow),
      Py_INCREF(forwardOf);
  rt.tensorType = reinterpret_cast<PyTypeObject *>(tensorType);
  rt.moduleType = moduleType;
  rt.followPredicate = follow;
  rt.forwardOf = forwardOf;
  rt.followCache = PyDict_New();
  PyObject *seq =
      PySequence_Fast(caches, "inline_cache_entries must be a sequence");
  if (!seq)
    return nullptr;
  for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(seq) && i < 256; ++i)
    rt.inlineCaches[i] = static_cast<unsigned char>(
        PyLong_AsLong(PySequence_Fast_GET_ITEM(seq, i)));
  Py_DECREF(seq);
  Py_RETURN_NONE;
}

// run_region(fn, args, kwargs, arg_sources, tracker): calls fn(*args, **kwargs)
// with fn's frame, and every frame it follows, in dynoc's evaluator.
PyObject *runRegion(PyObject *, PyObject *args) {
  PyObject *fn, *fargs, *fkwargs, *sources, *tracker;
  if (!PyArg_ParseTuple(args, "OO!OO!O", &fn, &PyTuple_Type, &fargs, &fkwargs,
                        &PyList_Type, &sources, &tracker))
    return nullptr;
  if (!PyFunction_Check(fn)) {
    PyErr_SetString(PyExc_TypeError,
                    "run_region: fn must be a Python function");
    return nullptr;
  }
  RegionState saved = regionState();
  RegionState &st = regionState();
  st.tracker = tracker;
  st.passthrough = false;
  st.pendingCode = reinterpret_cast<PyCodeObject *>(PyFunction_GET_CODE(fn));
  st.pendingSources.clear();
  for (Py_ssize_t i = 0; i < PyList_GET_SIZE(sources); ++i) {
    const char *s = PyUnicode_AsUTF8(PyList_GET_ITEM(sources, i));
    st.pendingSources.push_back(s ? s : "");
  }
  dynoc_set_frame_hook(1);
  PyObject *r =
      PyObject_Call(fn, fargs, fkwargs == Py_None ? nullptr : fkwargs);
  st = saved;
  if (!saved.tracker)
    dynoc_set_frame_hook(0);
  return r;
}

PyMethodDef kMethods[] = {
    {"init", init, METH_VARARGS, "Hand the evaluator the objects it needs."},
    {"run_region", runRegion, METH_VARARGS,
     "run_region(fn, args, kwargs, arg_sources, tracker): run fn under the "
     "evaluator."},
    {nullptr, nullptr, 0, nullptr}};

PyModuleDef kModule = {PyModuleDef_HEAD_INIT, "_dynoc_C",
                       "dynoc's PEP 523 hook and bytecode evaluator", -1,
                       kMethods};
} // namespace

PyMODINIT_FUNC PyInit__dynoc_C() { return PyModule_Create(&kModule); }
