//===- exceptions.cpp - CPython's exception operations -------------------===//
#include "exceptions.h"

namespace dynoc::capture {

bool validExceptType(PyObject *type) {
  bool ok = true;
  if (PyTuple_Check(type)) {
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(type); ++i)
      ok = ok && PyExceptionClass_Check(PyTuple_GET_ITEM(type, i));
  } else {
    ok = PyExceptionClass_Check(type);
  }
  if (!ok)
    PyErr_SetString(PyExc_TypeError, "catching classes that do not inherit "
                                     "from BaseException is not allowed");
  return ok;
}

bool validExceptStarType(PyObject *type) {
  if (!validExceptType(type))
    return false;
  int groupClass = 0;
  if (PyTuple_Check(type)) {
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(type) && groupClass == 0; ++i)
      groupClass = PyObject_IsSubclass(PyTuple_GET_ITEM(type, i),
                                       PyExc_BaseExceptionGroup);
  } else {
    groupClass = PyObject_IsSubclass(type, PyExc_BaseExceptionGroup);
  }
  if (groupClass > 0)
    PyErr_SetString(PyExc_TypeError,
                    "catching ExceptionGroup with except* is not allowed. Use "
                    "except instead.");
  return groupClass == 0;
}

bool matchExceptionGroup(PyObject *exc, PyObject *type, PyObject *&match,
                         PyObject *&rest) {
  auto *groupType = reinterpret_cast<PyTypeObject *>(PyExc_BaseExceptionGroup);
  match = rest = nullptr;
  if (exc != Py_None && PyErr_GivenExceptionMatches(exc, type)) {
    if (PyObject_TypeCheck(exc, groupType)) {
      match = Py_NewRef(exc);
    } else {
      PyObject *excs = PyTuple_Pack(1, exc);
      match = excs ? PyObject_CallFunction(PyExc_BaseExceptionGroup, "(sO)", "",
                                           excs)
                   : nullptr;
      Py_XDECREF(excs);
      if (!match)
        return false;
    }
    rest = Py_NewRef(Py_None);
    return true;
  }
  if (exc != Py_None && PyObject_TypeCheck(exc, groupType)) {
    PyObject *pair = PyObject_CallMethod(exc, "split", "(O)", type);
    if (!pair)
      return false;
    if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2) {
      Py_DECREF(pair);
      PyErr_SetString(PyExc_TypeError, "split() must return a 2-tuple");
      return false;
    }
    match = Py_NewRef(PyTuple_GET_ITEM(pair, 0));
    rest = Py_NewRef(PyTuple_GET_ITEM(pair, 1));
    Py_DECREF(pair);
    return true;
  }
  match = Py_NewRef(Py_None);
  rest = Py_NewRef(Py_None);
  return true;
}

void raiseNameError(const char *format, PyObject *name) {
  PyErr_Format(PyExc_NameError, format, name);
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  PyErr_NormalizeException(&type, &value, &tb);
  if (value && PyObject_SetAttrString(value, "name", name) < 0)
    PyErr_Clear();
  PyErr_Restore(type, value, tb);
}

namespace {

bool isGroup(PyObject *exc) {
  return PyObject_TypeCheck(
      exc, reinterpret_cast<PyTypeObject *>(PyExc_BaseExceptionGroup));
}

/// Adds the ids of `exc`'s leaf exceptions (itself if not a group) to `ids`.
bool collectLeafIds(PyObject *exc, PyObject *ids) {
  if (exc == Py_None)
    return true;
  if (!isGroup(exc)) {
    PyObject *id = PyLong_FromVoidPtr(exc);
    bool ok = id && PySet_Add(ids, id) == 0;
    Py_XDECREF(id);
    return ok;
  }
  PyObject *excs = reinterpret_cast<PyBaseExceptionGroupObject *>(exc)->excs;
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(excs); ++i) {
    if (Py_EnterRecursiveCall(" in collecting exception group leaves"))
      return false;
    bool ok = collectLeafIds(PyTuple_GET_ITEM(excs, i), ids);
    Py_LeaveRecursiveCall();
    if (!ok)
      return false;
  }
  return true;
}

/// Was `a` re-raised as `b` (the same notes, traceback, cause and context)?
bool sameMetadata(PyObject *a, PyObject *b) {
  auto *x = reinterpret_cast<PyBaseExceptionObject *>(a);
  auto *y = reinterpret_cast<PyBaseExceptionObject *>(b);
  return x->notes == y->notes && x->traceback == y->traceback &&
         x->cause == y->cause && x->context == y->context;
}

/// The part of the group `eg` whose leaves are leaves of the groups in
/// `keep` (None if empty), by BaseExceptionGroup.split (never a subclass's
/// override), as CPython's exception_group_projection.
PyObject *projection(PyObject *eg, PyObject *keep) {
  PyObject *ids = PySet_New(nullptr);
  if (!ids)
    return nullptr;
  for (Py_ssize_t i = 0; i < PyList_GET_SIZE(keep); ++i)
    if (!collectLeafIds(PyList_GET_ITEM(keep, i), ids)) {
      Py_DECREF(ids);
      return nullptr;
    }
  // split(condition) calls it on groups and leaves alike: keep an exception
  // whose id is a kept leaf's. It takes Python functions only.
  static PyObject *makeCondition = nullptr;
  if (!makeCondition) {
    PyObject *code = Py_CompileString("lambda ids: lambda e: id(e) in ids",
                                      "<dynoc except*>", Py_eval_input);
    PyObject *builtins = PyImport_ImportModule("builtins"); // not the frame's
    PyObject *globals = code && builtins ? PyDict_New() : nullptr;
    if (globals && PyDict_SetItemString(globals, "__builtins__",
                                        PyModule_GetDict(builtins)) == 0)
      makeCondition = PyEval_EvalCode(code, globals, globals);
    Py_XDECREF(code), Py_XDECREF(builtins), Py_XDECREF(globals);
  }
  PyObject *kept =
      makeCondition ? PyObject_CallOneArg(makeCondition, ids) : nullptr;
  Py_DECREF(ids);
  if (!kept)
    return nullptr;
  PyObject *pair =
      PyObject_CallMethod(PyExc_BaseExceptionGroup, "split", "(OO)", eg, kept);
  Py_DECREF(kept);
  if (!pair)
    return nullptr;
  PyObject *match = PyTuple_Check(pair) && PyTuple_GET_SIZE(pair) == 2
                        ? Py_NewRef(PyTuple_GET_ITEM(pair, 0))
                        : nullptr;
  if (!match)
    PyErr_SetString(PyExc_TypeError, "split() must return a 2-tuple");
  Py_DECREF(pair);
  return match;
}

} // namespace

PyObject *prepReraiseStar(PyObject *orig, PyObject *excs) {
  Py_ssize_t n = PyList_GET_SIZE(excs);
  if (n == 0)
    return Py_NewRef(Py_None);
  if (!isGroup(orig)) // a naked exception, wrapped: one clause ran
    return Py_NewRef(PyList_GET_ITEM(excs, 0));
  PyObject *raised = PyList_New(0), *reraised = PyList_New(0);
  PyObject *result = nullptr;
  if (raised && reraised) {
    bool ok = true;
    for (Py_ssize_t i = 0; ok && i < n; ++i) {
      PyObject *e = PyList_GET_ITEM(excs, i);
      if (e != Py_None)
        ok = PyList_Append(sameMetadata(e, orig) ? reraised : raised, e) == 0;
    }
    PyObject *kept = ok ? projection(orig, reraised) : nullptr;
    if (kept && PyList_GET_SIZE(raised) == 0) {
      result = kept;
    } else if (kept) {
      if (kept == Py_None || PyList_Append(raised, kept) == 0)
        result = PyList_GET_SIZE(raised) > 1
                     ? PyObject_CallFunction(PyExc_BaseExceptionGroup, "(sO)",
                                             "", raised)
                     : Py_NewRef(PyList_GET_ITEM(raised, 0));
      Py_DECREF(kept);
    }
  }
  Py_XDECREF(raised);
  Py_XDECREF(reraised);
  return result;
}

} // namespace dynoc::capture
