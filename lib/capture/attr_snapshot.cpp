//===- attr_snapshot.cpp - what nn.Module attribute reads depended on -----===//
#include "attr_snapshot.h"

#include "evaluator_internal.h"
#include "guard_check.h"

namespace dynoc::capture {
namespace {

bool validTag(PyTypeObject *type) {
  return (type->tp_flags & Py_TPFLAGS_VALID_VERSION_TAG) &&
         type->tp_version_tag != 0;
}

/// Does `obj` look its attributes up as nn.Module does (attrLookup's fast
/// path): a Module whose type keeps Module's __getattr__ and object's
/// __getattribute__?
bool plainModule(PyObject *obj) {
  static PyObject *getattrName = PyUnicode_InternFromString("__getattr__");
  static PyObject *getattributeName =
      PyUnicode_InternFromString("__getattribute__");
  PyObject *moduleType = runtime().moduleType;
  if (!moduleType || !PyType_Check(moduleType))
    return false;
  auto *module = reinterpret_cast<PyTypeObject *>(moduleType);
  PyTypeObject *tp = Py_TYPE(obj);
  return PyObject_TypeCheck(obj, module) &&
         _PyType_Lookup(tp, getattrName) ==
             _PyType_Lookup(module, getattrName) &&
         _PyType_Lookup(tp, getattributeName) ==
             _PyType_Lookup(&PyBaseObject_Type, getattributeName);
}

} // namespace

void AttrSnapshot::clear() {
  for (auto &[dict, version] : dicts_)
    Py_DECREF(dict);
  for (auto &[type, version] : types_)
    Py_DECREF(type);
  dicts_.clear();
  types_.clear();
  cacheable_ = true;
}

void AttrSnapshot::recordDict(PyObject *dict) {
  for (auto &[d, version] : dicts_)
    if (d == dict)
      return;
  Py_INCREF(dict);
  dicts_.emplace_back(dict, dictVersion(dict));
}

bool AttrSnapshot::recordType(PyTypeObject *type) {
  if (!validTag(type))
    return false;
  for (auto &[t, version] : types_)
    if (t == type)
      return true;
  Py_INCREF(type);
  types_.emplace_back(type, type->tp_version_tag);
  return true;
}

PyObject *AttrSnapshot::read(PyObject *obj, PyObject *name) {
  static PyObject *dictNames[3] = {PyUnicode_InternFromString("_parameters"),
                                   PyUnicode_InternFromString("_buffers"),
                                   PyUnicode_InternFromString("_modules")};
  PyObject **dictPtr = plainModule(obj) ? _PyObject_GetDictPtr(obj) : nullptr;
  PyObject *instance = dictPtr ? *dictPtr : nullptr;
  PyTypeObject *tp = Py_TYPE(obj);
  // The type's entry (after _PyType_Lookup, whose cache gives the type a
  // version tag). Anything with __get__ computes its value: not recorded.
  PyObject *descr = instance ? _PyType_Lookup(tp, name) : nullptr;
  if (!instance || !PyDict_Check(instance) || !recordType(tp) ||
      (descr && Py_TYPE(descr)->tp_descr_get)) {
    cacheable_ = false;
    return attrLookup(obj, name);
  }
  // object.__getattribute__ without data descriptors: the instance dict,
  // then the type's plain attribute, then Module.__getattr__'s three dicts.
  recordDict(instance);
  if (PyObject *v = PyDict_GetItemWithError(instance, name))
    return Py_NewRef(v);
  if (PyErr_Occurred())
    return nullptr;
  if (descr)
    return Py_NewRef(descr);
  for (PyObject *dictName : dictNames) {
    PyObject *d = PyDict_GetItemWithError(instance, dictName);
    if (!d && PyErr_Occurred())
      return nullptr;
    if (!d || !PyDict_Check(d))
      continue;
    recordDict(d);
    if (PyObject *v = PyDict_GetItemWithError(d, name))
      return Py_NewRef(v);
    if (PyErr_Occurred())
      return nullptr;
  }
  // Nowhere: the ordinary lookup raises its AttributeError.
  cacheable_ = false;
  return attrLookup(obj, name);
}

void AttrSnapshot::noteCompared(PyObject *value) {
  PyTypeObject *tp = Py_TYPE(value);
  if (!(value == Py_None || tp == &PyLong_Type || tp == &PyBool_Type ||
        tp == &PyFloat_Type || tp == &PyUnicode_Type))
    cacheable_ = false;
}

bool AttrSnapshot::unchanged() const {
  for (const auto &[dict, version] : dicts_)
    if (dictVersion(dict) != version)
      return false;
  for (const auto &[type, version] : types_)
    if (!validTag(type) || type->tp_version_tag != version)
      return false;
  return true;
}

int AttrSnapshot::traverse(visitproc visit, void *arg) const {
  for (const auto &[dict, version] : dicts_)
    Py_VISIT(dict);
  for (const auto &[type, version] : types_)
    Py_VISIT(reinterpret_cast<PyObject *>(type));
  return 0;
}

} // namespace dynoc::capture
