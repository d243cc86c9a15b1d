//===- evaluator_match.cpp - pattern matching -----------------------------===//
//
// match/case: MATCH_MAPPING, MATCH_SEQUENCE, MATCH_KEYS and MATCH_CLASS;
// the subject's type and the keys a pattern reads become guards.
//
//===----------------------------------------------------------------------===//
#include "evaluator_internal.h"

namespace dynoc::capture {

/// MATCH_KEYS: pushes the values of `keys` in the mapping `subject`, each
/// with its item source, or None when one is missing (as CPython does,
/// through the mapping's `get`). Whether each key is there is guarded.
bool Evaluator::matchKeys(const Slot &subject, const Slot &keys) {
  Py_ssize_t n = PyTuple_GET_SIZE(keys.value);
  PyObject *get = PyObject_GetAttrString(subject.value, "get");
  PyObject *missing = PyObject_CallNoArgs((PyObject *)&PyBaseObject_Type);
  PyObject *values = PyTuple_New(n);
  PyObject *seen = PySet_New(nullptr);
  auto items = std::make_shared<std::vector<std::string>>();
  bool ok = get && missing && values && seen, complete = true;
  for (Py_ssize_t i = 0; ok && i < n; ++i) {
    PyObject *key = PyTuple_GET_ITEM(keys.value, i);
    if (PySet_Contains(seen, key) || PySet_Add(seen, key)) {
      if (!PyErr_Occurred()) // as CPython: a key given twice
        PyErr_Format(PyExc_ValueError,
                     "mapping pattern checks duplicate key (%R)", key);
      ok = false;
      break;
    }
    PyObject *v;
    {
      Passthrough p;
      v = PyObject_CallFunctionObjArgs(get, key, missing, nullptr);
    }
    if (!v) {
      ok = false;
      break;
    }
    bool present = v != missing;
    if (!subject.source.empty())
      callTracker("on_key_guard", Py_BuildValue("(sOi)", subject.source.c_str(),
                                                key, int(present)));
    if (!present) {
      Py_DECREF(v);
      complete = false;
      break;
    }
    PyTuple_SET_ITEM(values, i, v);
    items->push_back(itemSource(subject.source, key));
  }
  Py_XDECREF(get), Py_XDECREF(missing), Py_XDECREF(seen);
  return pushMatch(ok, complete, values, std::move(items));
}

/// What a MATCH_KEYS/MATCH_CLASS pushes: the tuple it read (owned, with
/// its items' sources) when the pattern matched, else None; nothing when
/// an error is set (`ok` false).
bool Evaluator::pushMatch(bool ok, bool matched, PyObject *tuple,
                          ItemSources items) {
  if (!ok || !matched) {
    Py_XDECREF(tuple);
    if (ok)
      push(Py_NewRef(Py_None));
    return ok;
  }
  push(tuple, {}, std::move(items));
  return true;
}

/// MATCH_CLASS: pushes the tuple of `subject`'s attributes that a class
/// pattern with `nargs` positional sub-patterns and keyword `kwNames`
/// reads (each with its attribute source), or None when `subject` is not
/// an instance of `cls` or lacks one. CPython's checks and messages.
bool Evaluator::matchClass(const Slot &subject, PyObject *cls, int nargs,
                           PyObject *kwNames) {
  if (!PyType_Check(cls)) {
    PyErr_SetString(PyExc_TypeError, "called match pattern must be a type");
    return false;
  }
  const char *clsName = reinterpret_cast<PyTypeObject *>(cls)->tp_name;
  int inst = PyObject_IsInstance(subject.value, cls);
  if (inst <= 0) {
    if (inst == 0)
      push(Py_NewRef(Py_None));
    return inst == 0;
  }
  PyObject *matchArgs = nullptr;
  bool matchSelf = false;
  if (nargs) {
    matchArgs = PyObject_GetAttrString(cls, "__match_args__");
    if (!matchArgs) {
      if (!PyErr_ExceptionMatches(PyExc_AttributeError))
        return false;
      PyErr_Clear();
      matchSelf = PyType_HasFeature(reinterpret_cast<PyTypeObject *>(cls),
                                    _Py_TPFLAGS_MATCH_SELF);
    } else if (!PyTuple_CheckExact(matchArgs)) {
      PyErr_Format(PyExc_TypeError,
                   "%s.__match_args__ must be a tuple (got %s)", clsName,
                   Py_TYPE(matchArgs)->tp_name);
      Py_DECREF(matchArgs);
      return false;
    }
    Py_ssize_t allowed = matchArgs ? PyTuple_GET_SIZE(matchArgs) : matchSelf;
    if (nargs > allowed) {
      PyErr_Format(PyExc_TypeError,
                   "%s() accepts %zd positional sub-pattern%s (%d given)",
                   clsName, allowed, allowed == 1 ? "" : "s", nargs);
      Py_XDECREF(matchArgs);
      return false;
    }
  }
  std::vector<PyObject *> names; // borrowed
  for (int i = 0; !matchSelf && i < nargs; ++i)
    names.push_back(PyTuple_GET_ITEM(matchArgs, i));
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(kwNames); ++i)
    names.push_back(PyTuple_GET_ITEM(kwNames, i));
  PyObject *attrs = PyTuple_New(Py_ssize_t(names.size()) + matchSelf);
  auto items = std::make_shared<std::vector<std::string>>();
  bool ok = attrs != nullptr, found = true;
  if (ok && matchSelf) {
    PyTuple_SET_ITEM(attrs, 0, Py_NewRef(subject.value));
    items->push_back(subject.source);
  }
  for (size_t i = 0; ok && found && i < names.size(); ++i) {
    PyObject *name = names[i];
    if (!PyUnicode_Check(name)) {
      PyErr_Format(PyExc_TypeError,
                   "__match_args__ elements must be strings (got %s)",
                   Py_TYPE(name)->tp_name);
      ok = false;
      break;
    }
    for (size_t j = 0; j < i; ++j)
      if (PyUnicode_Compare(names[j], name) == 0) {
        PyErr_Format(PyExc_TypeError,
                     "%s() got multiple sub-patterns for attribute %R", clsName,
                     name);
        ok = false;
      }
    if (!ok)
      break;
    PyObject *v;
    {
      Passthrough p; // properties run natively
      v = PyObject_GetAttr(subject.value, name);
    }
    if (!v) {
      ok = PyErr_ExceptionMatches(PyExc_AttributeError);
      found = false;
      if (ok)
        PyErr_Clear();
      break;
    }
    PyTuple_SET_ITEM(attrs, Py_ssize_t(i) + matchSelf, v);
    items->push_back(subject.source.empty()
                         ? std::string()
                         : subject.source + "." + PyUnicode_AsUTF8(name));
  }
  Py_XDECREF(matchArgs);
  return pushMatch(ok, found, attrs, std::move(items));
}

/// Opcodes for structural pattern matching (match/case).
Evaluator::Step Evaluator::execMatch(Op op, int oparg) {
  switch (op) {
  case Op::MatchMapping:
  case Op::MatchSequence: {
    const Slot &subject = stack.back();
    guardType(subject);
    unsigned long flag =
        op == Op::MatchMapping ? Py_TPFLAGS_MAPPING : Py_TPFLAGS_SEQUENCE;
    push(PyBool_FromLong(Py_TYPE(subject.value)->tp_flags & flag));
    break;
  }
  case Op::MatchKeys:
    if (!matchKeys(stack[stack.size() - 2], stack.back()))
      return Step::Error;
    break;
  case Op::MatchClass: {
    Slot names = pop(), cls = pop(), subject = pop();
    guardType(subject);
    bool ok = matchClass(subject, cls.value, oparg, names.value);
    Py_DECREF(names.value), Py_DECREF(cls.value), Py_DECREF(subject.value);
    if (!ok)
      return Step::Error;
    break;
  }
  default:
    return Step::Unhandled;
  }
  return Step::Done;
}

} // namespace dynoc::capture
