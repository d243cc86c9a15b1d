//===- module.cpp - the _dynoc_C extension module -------------------------===//
#include "dispatcher.h"
#include "evaluator.h"
#include "evaluator_internal.h"
#include "frame_hook.h"
#include "guard_check.h"

namespace {
using namespace dynoc::capture;

// init(tensor_type, module_type, inline_cache_entries, follow, forward_of,
//      special_calls, region_type, callee_callback)
PyObject *init(PyObject *, PyObject *args) {
  PyObject *tensorType, *moduleType, *caches, *follow, *forwardOf, *special,
      *regionType, *calleeCallback;
  if (!PyArg_ParseTuple(args, "O!OOOOO!O!O", &PyType_Type, &tensorType,
                        &moduleType, &caches, &follow, &forwardOf, &PyDict_Type,
                        &special, &PyType_Type, &regionType, &calleeCallback))
    return nullptr;
  Runtime &rt = runtime();
  Py_INCREF(calleeCallback);
  Py_XSETREF(rt.calleeCallback, calleeCallback);
  Py_INCREF(tensorType), Py_INCREF(moduleType), Py_INCREF(follow),
      Py_INCREF(forwardOf);
  rt.tensorType = reinterpret_cast<PyTypeObject *>(tensorType);
  rt.moduleType = moduleType;
  rt.followPredicate = follow;
  rt.forwardOf = forwardOf;
  rt.followCache = PyDict_New();
  Py_INCREF(special);
  rt.specialCalls = special;
  Py_INCREF(regionType);
  rt.regionType = regionType;
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
  if (fkwargs != Py_None && !PyDict_Check(fkwargs)) {
    PyErr_SetString(PyExc_TypeError, "run_region: kwargs must be a dict");
    return nullptr;
  }
  // The call as a vectorcall: positional arguments, then keyword values.
  std::vector<PyObject *> argv;
  PendingCall call;
  call.code = reinterpret_cast<PyCodeObject *>(PyFunction_GET_CODE(fn));
  call.entry = true;
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(fargs); ++i) {
    argv.push_back(PyTuple_GET_ITEM(fargs, i));
    PyObject *src =
        i < PyList_GET_SIZE(sources) ? PyList_GET_ITEM(sources, i) : nullptr;
    const char *s = src ? PyUnicode_AsUTF8(src) : nullptr;
    call.argSources.push_back(s ? s : "");
  }
  PyObject *kwnames = nullptr;
  if (fkwargs != Py_None && PyDict_GET_SIZE(fkwargs) > 0) {
    kwnames = PyTuple_New(PyDict_GET_SIZE(fkwargs));
    if (!kwnames)
      return nullptr;
    Py_ssize_t pos = 0, k = 0;
    PyObject *key, *val;
    while (PyDict_Next(fkwargs, &pos, &key, &val)) {
      Py_INCREF(key);
      PyTuple_SET_ITEM(kwnames, k++, key);
      argv.push_back(val);
      call.argSources.push_back(std::string("L['") + PyUnicode_AsUTF8(key) +
                                "']");
    }
  }
  call.kwnames = kwnames;
  RegionState saved = regionState();
  RegionState &st = regionState();
  st.tracker = tracker;
  st.passthrough = false;
  st.pending = std::move(call);
  st.cells = std::make_shared<CellSources>();
  st.rootGlobals = PyFunction_GET_GLOBALS(fn);
  PyObject *resumable = PyObject_GetAttrString(tracker, "resumable");
  st.resumable = resumable && PyObject_IsTrue(resumable) == 1;
  Py_XDECREF(resumable);
  PyErr_Clear();
  st.entryDepth = st.frames.size();
  st.topCall = nullptr;
  dynoc_set_frame_hook(1);
  Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  PyObject *r =
      PyObject_Vectorcall(fn, argv.data(), argv.size() - nkw, kwnames);
  Py_XDECREF(kwnames);
  st = saved;
  if (!saved.tracker && !runtime().entryCallback)
    dynoc_set_frame_hook(0);
  return r;
}

// set_entry(modules, func_name, callback): from now on every call of
// func_name in one of the modules goes to callback(fn, args, kwargs).
PyObject *setEntry(PyObject *, PyObject *args) {
  PyObject *modules, *callback;
  const char *name;
  if (!PyArg_ParseTuple(args, "O!sO", &PyList_Type, &modules, &name, &callback))
    return nullptr;
  Runtime &rt = runtime();
  rt.entryModules.clear();
  for (Py_ssize_t i = 0; i < PyList_GET_SIZE(modules); ++i) {
    const char *m = PyUnicode_AsUTF8(PyList_GET_ITEM(modules, i));
    if (!m)
      return nullptr;
    rt.entryModules.push_back(m);
  }
  rt.entryName = name;
  Py_INCREF(callback);
  Py_XSETREF(rt.entryCallback, callback);
  dynoc_set_frame_hook(1);
  Py_RETURN_NONE;
}

// current_location(): (filename, line) of the innermost frame the evaluator
// runs on this thread, or None.
PyObject *currentLocation(PyObject *, PyObject *) {
  auto &frames = regionState().frames;
  if (frames.empty())
    Py_RETURN_NONE;
  auto [co, pc] = frames.back();
  return Py_BuildValue("(Oi)", co->co_filename,
                       PyCode_Addr2Line(co, int(*pc * 2)));
}

// break_snapshot(): the region function's frame inside its current CALL
// (Evaluator::snapshot), or None when it is not inside one.
PyObject *breakSnapshot(PyObject *, PyObject *) {
  const Evaluator *top = regionState().topCall;
  if (!top)
    Py_RETURN_NONE;
  return top->snapshot();
}

PyMethodDef kMethods[] = {
    {"break_snapshot", breakSnapshot, METH_NOARGS,
     "The region function's frame inside its current CALL, or None."},
    {"current_location", currentLocation, METH_NOARGS,
     "(filename, line) of the innermost evaluated frame, or None."},
    {"set_entry", setEntry, METH_VARARGS,
     "set_entry(modules, func_name, callback): calls of that function become "
     "capture regions."},
    {"attr", reinterpret_cast<PyCFunction>(attr), METH_FASTCALL,
     "attr(obj, name): getattr, with nn.Module attributes found fast."},
    {"check_tensor", reinterpret_cast<PyCFunction>(checkTensor),
     METH_FASTCALL | METH_KEYWORDS,
     "check_tensor(t, dtype, device, requires_grad, size, stride): a tensor "
     "guard."},
    {"same_versions", reinterpret_cast<PyCFunction>(sameVersions),
     METH_FASTCALL,
     "same_versions(tensors, versions): each tensor's _version unchanged."},
    {"init", init, METH_VARARGS, "Hand the evaluator the objects it needs."},
    {"run_region", runRegion, METH_VARARGS,
     "run_region(fn, args, kwargs, arg_sources, tracker): run fn under the "
     "evaluator."},
    {nullptr, nullptr, 0, nullptr}};

PyModuleDef kModule = {PyModuleDef_HEAD_INIT, "_dynoc_C",
                       "dynoc's PEP 523 hook and bytecode evaluator", -1,
                       kMethods};
} // namespace

PyMODINIT_FUNC PyInit__dynoc_C() {
  // Each CPython version has its own build (its frame layout and bytecode):
  // one built for another version must not load, even where the file name
  // would let it (the 3.11 build's plain `_dynoc_C.so`).
  if ((Py_Version >> 16) != (PY_VERSION_HEX >> 16)) {
    PyErr_Format(PyExc_ImportError,
                 "_dynoc_C was built for CPython %d.%d, not for this %d.%d: "
                 "build //lib/capture:extensions with this version's headers",
                 PY_MAJOR_VERSION, PY_MINOR_VERSION, int(Py_Version >> 24),
                 int((Py_Version >> 16) & 0xFF));
    return nullptr;
  }
  PyObject *module = PyModule_Create(&kModule);
  if (module && addDispatcherType(module) < 0)
    Py_CLEAR(module);
  return module;
}
