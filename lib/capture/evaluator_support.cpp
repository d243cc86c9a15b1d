//===- evaluator_support.cpp - the evaluator's helpers ------------------===//
#include "evaluator_internal.h"

#include <set>
#include <string>

namespace dynoc::capture {

const char *unsupportedReason(PyCodeObject *co, int &badOpcode) {
  badOpcode = -1;
  PyObject *code = PyCode_GetCode(co);
  if (!code)
    return "unreadable bytecode";
  const auto *instrs =
      reinterpret_cast<const uint8_t *>(PyBytes_AS_STRING(code));
  Py_ssize_t n = PyBytes_GET_SIZE(code) / 2;
  const char *reason = nullptr;
  int ext = 0;
  for (Py_ssize_t i = 0; i < n;
       i += 1 + runtime().inlineCaches[instrs[2 * i]]) {
    int oparg = instrs[2 * i + 1] | ext;
    Op op = decodeOp(instrs[2 * i], oparg);
    ext = op == Op::ExtendedArg ? oparg << 8 : 0;
    if (op == Op::Unsupported) {
      badOpcode = instrs[2 * i];
      reason = "an unsupported opcode";
      break;
    }
  }
  Py_DECREF(code);
  return reason;
}

bool shouldFollow(PyObject *func) {
  PyObject *code = PyFunction_GET_CODE(func);
  Runtime &rt = runtime();
  PyObject *cached = PyDict_GetItem(rt.followCache, code);
  if (cached)
    return cached == Py_True;
  Untraced untraced;
  PyObject *r = PyObject_CallOneArg(rt.followPredicate, code);
  bool follow = r && PyObject_IsTrue(r) == 1;
  Py_XDECREF(r);
  if (!r)
    PyErr_Clear();
  PyDict_SetItem(rt.followCache, code, follow ? Py_True : Py_False);
  return follow;
}

PyObject *argsTuple(const std::vector<PyObject *> &args) {
  PyObject *t = PyTuple_New(args.size());
  for (size_t i = 0; t && i < args.size(); ++i) {
    Py_INCREF(args[i]);
    PyTuple_SET_ITEM(t, i, args[i]);
  }
  return t;
}

PyCodeObject *wrappedCode(PyObject *fn) {
  PyObject *inner = PyObject_GetAttrString(fn, "__wrapped__");
  if (!inner)
    PyErr_Clear();
  PyObject *f = inner ? inner : fn;
  if (PyMethod_Check(f))
    f = PyMethod_GET_FUNCTION(f);
  PyCodeObject *co =
      PyFunction_Check(f)
          ? reinterpret_cast<PyCodeObject *>(PyFunction_GET_CODE(f))
          : nullptr;
  Py_XDECREF(inner); // the function lives on in the wrapper's closure
  return co;
}

// ma_version_tag is deprecated from 3.12 (3.14 drops it); 3.11-3.13, the
// versions dynoc builds for, keep it, changed on every mutation of the
// dict and unique across dicts.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
uint64_t dictVersion(PyObject *dict) {
  return reinterpret_cast<PyDictObject *>(dict)->ma_version_tag;
}
#pragma GCC diagnostic pop

bool isGuardableScalar(PyObject *v) {
  return v == Py_None || PyBool_Check(v) || PyLong_Check(v) ||
         PyFloat_Check(v) || PyUnicode_Check(v);
}

bool isTypeQuery(PyObject *callable) {
  if (callable == reinterpret_cast<PyObject *>(&PyType_Type))
    return true;
  if (!PyCFunction_Check(callable))
    return false;
  PyObject *self = PyCFunction_GET_SELF(callable);
  if (!self || !PyModule_Check(self))
    return false;
  const char *module = PyModule_GetName(self);
  if (!module) {
    PyErr_Clear();
    return false;
  }
  if (std::string(module) != "builtins")
    return false;
  const char *name =
      reinterpret_cast<PyCFunctionObject *>(callable)->m_ml->ml_name;
  static const std::set<std::string> kTypeQueries = {"isinstance",
                                                     "issubclass", "callable"};
  return name && kTypeQueries.count(name);
}

bool isMutatingMethod(PyObject *cfunction) {
  PyObject *self = PyCFunction_GET_SELF(cfunction);
  if (!self || !(PyList_Check(self) || PyDict_Check(self) ||
                 PyAnySet_Check(self) || PyByteArray_Check(self)))
    return false;
  const char *name =
      reinterpret_cast<PyCFunctionObject *>(cfunction)->m_ml->ml_name;
  static const std::set<std::string> kMutating = {
      "append",      "extend",      "insert",
      "pop",         "remove",      "clear",
      "sort",        "reverse",     "update",
      "setdefault",  "popitem",     "add",
      "discard",     "__setitem__", "__delitem__",
      "__iadd__",    "difference_update", "intersection_update",
      "symmetric_difference_update"};
  return name && kMutating.count(name);
}

std::string itemSource(const std::string &base, PyObject *key) {
  if (base.empty())
    return {};
  if (PyLong_Check(key))
    return base + "[" + std::to_string(PyLong_AsLongLong(key)) + "]";
  if (PyUnicode_Check(key))
    return base + "['" + PyUnicode_AsUTF8(key) + "']";
  return {};
}

std::string itemSource(const Slot &seq, Py_ssize_t i) {
  if (seq.items && i >= 0 && i < (Py_ssize_t)seq.items->size())
    return (*seq.items)[i];
  if (seq.source.empty())
    return {};
  return seq.source + "[" + std::to_string(i) + "]";
}

} // namespace dynoc::capture
