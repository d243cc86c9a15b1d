//===- guard_check.cpp - tensor guards checked in C -----------------------===//
//
// check_tensor(t, dtype, device, requires_grad, size, stride) is the guard
// every tensor argument of a compiled region gets (python/dynoc/capture/guards.py
// has its meaning and the Python version). It runs on every call, once per
// tensor, so it is written here: a handful of attribute reads and integer
// compares, without the Python frame and the lists the Python version makes.
//
//===----------------------------------------------------------------------===//
#include "guard_check.h"

#include "evaluator_internal.h"

namespace dynoc::capture {
namespace {

/// A new reference to `obj.name`, or null without an error when `obj` has
/// no such attribute (another error stays set).
PyObject *optionalAttr(PyObject *obj, PyObject *name) {
  PyObject *value = PyObject_GetAttr(obj, name);
  if (!value && PyErr_ExceptionMatches(PyExc_AttributeError))
    PyErr_Clear();
  return value;
}

/// 1 when the sequence `actual` matches `want` (a list or tuple whose None
/// items are dynamic dims), 0 when not, -1 with an error set.
int matches(PyObject *actual, PyObject *want) {
  PyObject *a = PySequence_Fast(actual, "size or stride is not a sequence");
  if (!a)
    return -1;
  PyObject *w = PySequence_Fast(want, "a guard's sizes are not a sequence");
  if (!w) {
    Py_DECREF(a);
    return -1;
  }
  int result = PySequence_Fast_GET_SIZE(a) == PySequence_Fast_GET_SIZE(w);
  for (Py_ssize_t i = 0; result == 1 && i < PySequence_Fast_GET_SIZE(w); ++i) {
    PyObject *wi = PySequence_Fast_GET_ITEM(w, i);
    if (wi == Py_None)
      continue;
    PyObject *ai = PySequence_Fast_GET_ITEM(a, i);
    if (PyLong_CheckExact(ai) && PyLong_CheckExact(wi)) {
      int overflowA, overflowW;
      long long x = PyLong_AsLongLongAndOverflow(ai, &overflowA);
      long long y = PyLong_AsLongLongAndOverflow(wi, &overflowW);
      if (!overflowA && !overflowW) {
        result = x == y;
        continue;
      }
    }
    result = PyObject_RichCompareBool(ai, wi, Py_EQ);
  }
  Py_DECREF(a);
  Py_DECREF(w);
  return result;
}

/// 1 when a dim that `size` has dynamic (None) is one the caller marked
/// static (torch._dynamo.mark_static), 0 when none is, -1 on an error.
int markedStatic(PyObject *t, PyObject *size) {
  static PyObject *marksName =
      PyUnicode_InternFromString("_dynamo_static_indices");
  PyObject *marks = optionalAttr(t, marksName);
  if (!marks)
    return PyErr_Occurred() ? -1 : 0;
  PyObject *it = PyObject_GetIter(marks);
  Py_DECREF(marks);
  if (!it)
    return -1;
  int found = 0;
  Py_ssize_t n = PySequence_Size(size);
  while (PyObject *d = PyIter_Next(it)) {
    Py_ssize_t dim = PyLong_AsSsize_t(d);
    Py_DECREF(d);
    if (dim == -1 && PyErr_Occurred()) {
      found = -1;
      break;
    }
    if (dim >= 0 && dim < n) {
      PyObject *item = PySequence_GetItem(size, dim);
      if (!item) {
        found = -1;
        break;
      }
      bool dynamic = item == Py_None;
      Py_DECREF(item);
      if (dynamic) {
        found = 1;
        break;
      }
    }
  }
  Py_DECREF(it);
  return found == 0 && PyErr_Occurred() ? -1 : found;
}

/// 1 when `t` lives on `device` ("cpu", "cuda", or another device type's
/// name), 0 when not, -1 on an error.
int onDevice(PyObject *t, PyObject *device) {
  static PyObject *isCpu = PyUnicode_InternFromString("is_cpu");
  static PyObject *isCuda = PyUnicode_InternFromString("is_cuda");
  static PyObject *deviceName = PyUnicode_InternFromString("device");
  static PyObject *typeName = PyUnicode_InternFromString("type");
  PyObject *flag = nullptr;
  if (PyUnicode_CompareWithASCIIString(device, "cpu") == 0)
    flag = isCpu;
  else if (PyUnicode_CompareWithASCIIString(device, "cuda") == 0)
    flag = isCuda;
  if (flag) {
    PyObject *v = PyObject_GetAttr(t, flag);
    if (!v)
      return -1;
    int r = PyObject_IsTrue(v);
    Py_DECREF(v);
    return r;
  }
  PyObject *dev = PyObject_GetAttr(t, deviceName);
  if (!dev)
    return -1;
  PyObject *type = PyObject_GetAttr(dev, typeName);
  Py_DECREF(dev);
  if (!type)
    return -1;
  int r = PyObject_RichCompareBool(type, device, Py_EQ);
  Py_DECREF(type);
  return r;
}

} // namespace

int tensorOfDtype(PyObject *t, PyObject *dtype) {
  static PyObject *dtypeName = PyUnicode_InternFromString("dtype");
  PyTypeObject *tensorType = runtime().tensorType;
  if (!tensorType || !PyObject_TypeCheck(t, tensorType))
    return 0;
  PyObject *v = PyObject_GetAttr(t, dtypeName);
  if (!v)
    return -1;
  // dtypes are singletons: identity first
  int same = v == dtype ? 1 : PyObject_RichCompareBool(v, dtype, Py_EQ);
  Py_DECREF(v);
  return same;
}

PyObject *tensorSizes(PyObject *t) {
  static PyObject *shapeName = PyUnicode_InternFromString("shape");
  return PyObject_GetAttr(t, shapeName);
}

PyObject *tensorStrides(PyObject *t) {
  static PyObject *strideName = PyUnicode_InternFromString("stride");
  return PyObject_CallMethodNoArgs(t, strideName);
}

int checkTensorGuard(PyObject *t, PyObject *dtype, PyObject *device,
                     PyObject *requiresGrad, PyObject *size, PyObject *stride) {
  static PyObject *gradName = PyUnicode_InternFromString("requires_grad");
  int same = tensorOfDtype(t, dtype);
  if (same != 1)
    return same;
  PyObject *v;
  if (!(v = PyObject_GetAttr(t, gradName)))
    return -1;
  same = PyObject_RichCompareBool(v, requiresGrad, Py_EQ);
  Py_DECREF(v);
  if (same != 1)
    return same;
  if ((same = onDevice(t, device)) != 1)
    return same;
  if (!(v = tensorSizes(t)))
    return -1;
  same = matches(v, size);
  Py_DECREF(v);
  if (same != 1)
    return same;
  if (!(v = tensorStrides(t)))
    return -1;
  same = matches(v, stride);
  Py_DECREF(v);
  if (same != 1)
    return same;
  int dynamic = PySequence_Contains(size, Py_None);
  if (dynamic != 1)
    return dynamic == 0 ? 1 : -1;
  int marked = markedStatic(t, size);
  return marked < 0 ? -1 : !marked;
}

namespace {

/// nn.Module.__getattr__'s own lookup, without raising: the entry `name` of
/// the instance dict's _parameters, _buffers or _modules (in that order), as
/// a new reference, or null (no error) when none has it.
PyObject *moduleEntry(PyObject *obj, PyObject *name) {
  static PyObject *dicts[3] = {PyUnicode_InternFromString("_parameters"),
                               PyUnicode_InternFromString("_buffers"),
                               PyUnicode_InternFromString("_modules")};
  PyObject **dictPtr = _PyObject_GetDictPtr(obj);
  PyObject *instance = dictPtr ? *dictPtr : nullptr;
  if (!instance)
    return nullptr;
  for (PyObject *dictName : dicts) {
    PyObject *d = PyDict_GetItemWithError(instance, dictName);
    if (!d || !PyDict_Check(d))
      continue;
    if (PyObject *v = PyDict_GetItemWithError(d, name)) {
      Py_INCREF(v);
      return v;
    }
  }
  return nullptr;
}

} // namespace

PyObject *attrLookup(PyObject *obj, PyObject *name) {
  static PyObject *getattrName = PyUnicode_InternFromString("__getattr__");
  static PyObject *getattributeName =
      PyUnicode_InternFromString("__getattribute__");
  PyObject *moduleType = runtime().moduleType;
  PyTypeObject *tp = Py_TYPE(obj);
  // An nn.Module whose type keeps Module's __getattr__ and object's
  // __getattribute__: the ordinary lookup, then Module's three dicts, with
  // no AttributeError made in between (the slow part of `m.conv1`).
  if (moduleType && PyType_Check(moduleType) &&
      _PyType_Lookup(tp, getattrName) ==
          _PyType_Lookup(reinterpret_cast<PyTypeObject *>(moduleType),
                         getattrName) &&
      _PyType_Lookup(tp, getattributeName) ==
          _PyType_Lookup(&PyBaseObject_Type, getattributeName) &&
      PyObject_TypeCheck(obj, reinterpret_cast<PyTypeObject *>(moduleType))) {
    if (PyObject *v = _PyObject_GenericGetAttrWithDict(obj, name, nullptr, 1))
      return v;
    if (PyErr_Occurred())
      return nullptr;
    if (PyObject *v = moduleEntry(obj, name))
      return v;
    if (PyErr_Occurred())
      return nullptr;
  }
  // Anything else (and a Module attribute that is nowhere): Python's own
  // lookup, with its error.
  return PyObject_GetAttr(obj, name);
}

PyObject *attr(PyObject *, PyObject *const *args, Py_ssize_t nargs) {
  if (nargs != 2 || !PyUnicode_Check(args[1])) {
    PyErr_SetString(PyExc_TypeError, "attr(obj, name: str)");
    return nullptr;
  }
  return attrLookup(args[0], args[1]);
}

PyObject *checkTensor(PyObject *, PyObject *const *args, Py_ssize_t nargs,
                      PyObject *kwnames) {
  // Guard texts pass dtype positionally and the rest by keyword; compiled
  // checks pass all six positionally.
  static const char *const kNames[] = {
      "t", "dtype", "device", "requires_grad", "size", "stride"};
  PyObject *a[6] = {nullptr};
  nargs = PyVectorcall_NARGS(nargs);
  if (nargs > 6) {
    PyErr_SetString(PyExc_TypeError, "check_tensor takes 6 arguments");
    return nullptr;
  }
  for (Py_ssize_t i = 0; i < nargs; ++i)
    a[i] = args[i];
  Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  for (Py_ssize_t k = 0; k < nkw; ++k) {
    PyObject *key = PyTuple_GET_ITEM(kwnames, k);
    int slot = -1;
    for (int i = 0; i < 6; ++i)
      if (PyUnicode_CompareWithASCIIString(key, kNames[i]) == 0)
        slot = i;
    if (slot < 0 || a[slot]) {
      PyErr_Format(PyExc_TypeError,
                   "check_tensor: unexpected or repeated argument '%U'", key);
      return nullptr;
    }
    a[slot] = args[nargs + k];
  }
  for (int i = 0; i < 6; ++i)
    if (!a[i]) {
      PyErr_Format(PyExc_TypeError, "check_tensor: missing argument '%s'",
                   kNames[i]);
      return nullptr;
    }
  if (!PyUnicode_Check(a[2])) {
    PyErr_SetString(PyExc_TypeError, "check_tensor: device must be a str");
    return nullptr;
  }
  int r = checkTensorGuard(a[0], a[1], a[2], a[3], a[4], a[5]);
  if (r < 0)
    return nullptr;
  return PyBool_FromLong(r);
}

PyObject *sameVersions(PyObject *, PyObject *const *args, Py_ssize_t nargs) {
  static PyObject *versionName = PyUnicode_InternFromString("_version");
  if (nargs != 2 || !PyList_Check(args[0]) || !PyList_Check(args[1]) ||
      PyList_GET_SIZE(args[0]) != PyList_GET_SIZE(args[1])) {
    PyErr_SetString(PyExc_TypeError,
                    "same_versions(tensors: list, versions: list) of one "
                    "length");
    return nullptr;
  }
  for (Py_ssize_t i = 0; i < PyList_GET_SIZE(args[0]); ++i) {
    PyObject *v = PyObject_GetAttr(PyList_GET_ITEM(args[0], i), versionName);
    if (!v)
      return nullptr;
    PyObject *want = PyList_GET_ITEM(args[1], i);
    int same = v == want ? 1 : PyObject_RichCompareBool(v, want, Py_EQ);
    Py_DECREF(v);
    if (same < 0)
      return nullptr;
    if (!same)
      Py_RETURN_FALSE;
  }
  Py_RETURN_TRUE;
}

} // namespace dynoc::capture
