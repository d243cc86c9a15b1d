//===- python_compat.h - CPython C API calls that moved between versions --===//
//
// The evaluator's few calls of CPython internals that 3.13 moved out of the
// public headers, behind one name each (the frame layout is frame_hook.c's).
//
//===----------------------------------------------------------------------===//
#ifndef DYNOC_CAPTURE_PYTHON_COMPAT_H
#define DYNOC_CAPTURE_PYTHON_COMPAT_H

#include <Python.h>

#if PY_VERSION_HEX >= 0x030D0000
// Exported by 3.13, declared only in its internal headers.
extern "C" int _PyDict_MergeEx(PyObject *a, PyObject *b, int override);
#endif

namespace dynoc::capture {

/// LIST_EXTEND: list.extend(iterable); -1 with the error set.
inline int listExtend(PyObject *list, PyObject *iterable) {
#if PY_VERSION_HEX >= 0x030D0000
  return PyList_Extend(list, iterable);
#else
  PyObject *r =
      _PyList_Extend(reinterpret_cast<PyListObject *>(list), iterable);
  Py_XDECREF(r);
  return r ? 0 : -1;
#endif
}

/// SET_UPDATE: set.update(iterable); -1 with the error set.
inline int setUpdate(PyObject *set, PyObject *iterable) {
#if PY_VERSION_HEX >= 0x030D0000
  PyObject *r = PyObject_CallMethod(set, "update", "O", iterable);
  Py_XDECREF(r);
  return r ? 0 : -1;
#else
  return _PySet_Update(set, iterable);
#endif
}

/// DICT_MERGE: a ** argument merged into the call's keywords; a repeated key
/// is an error (override 2).
inline int dictMergeKeywords(PyObject *dict, PyObject *mapping) {
  return _PyDict_MergeEx(dict, mapping, 2);
}

} // namespace dynoc::capture

#endif // DYNOC_CAPTURE_PYTHON_COMPAT_H
