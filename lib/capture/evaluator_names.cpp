//===- evaluator_names.cpp - names, attributes, imports -------------------===//
//
// The opcodes that read and write names: fast locals, cells and free
// variables, globals and builtins, module/class namespaces, attributes,
// constants and imports. Reads give a value its source (`L['x']`,
// `G['SCALE']`, `L['self'].fc1.weight`); stores are written through to the
// frame CPython keeps.
//
//===----------------------------------------------------------------------===//
#include "evaluator_internal.h"
#include "exceptions.h"

namespace dynoc::capture {

bool Evaluator::loadFast(int i) {
  Slot &l = locals[i];
  if (!l.value) {
    PyErr_Format(PyExc_UnboundLocalError,
                 "cannot access local variable '%U' where it is not "
                 "associated with a value",
                 PyTuple_GetItem(co->co_localsplusnames, i));
    return false;
  }
  Py_INCREF(l.value);
  push(l.value, l.source, l.items);
  stack.back().keywords = l.keywords;
  return true;
}

void Evaluator::storeFast(int i) {
  Slot s = pop(); // may be NULL: a comprehension restoring an unbound name
  Py_XDECREF(locals[i].value);
  locals[i] = std::move(s);
  locals[i].iterIndex = 0;
  mirror(i);
}

/// Opcodes for locals, cells, globals, names, attributes, constants and
/// imports.
Evaluator::Step Evaluator::execNames(Op op, int oparg) {
  PyObject *r = nullptr;
  switch (op) {
  case Op::LoadFast:
  case Op::LoadClosure:
    if (!loadFast(oparg))
      return Step::Error;
    break;
  case Op::LoadFastLoadFast: // 3.13: two locals, by nibble
    if (!loadFast(oparg >> 4) || !loadFast(oparg & 15))
      return Step::Error;
    break;
  case Op::LoadFastAndClear: { // an inlined comprehension saves its target
    Slot &l = locals[oparg];
    push(l.value, std::move(l.source), std::move(l.items));
    stack.back().keywords = std::move(l.keywords);
    l = Slot{};
    mirror(oparg);
    break;
  }
  case Op::StoreFast:
    storeFast(oparg);
    break;
  case Op::StoreFastStoreFast:
    storeFast(oparg >> 4);
    storeFast(oparg & 15);
    break;
  case Op::StoreFastLoadFast:
    storeFast(oparg >> 4);
    if (!loadFast(oparg & 15))
      return Step::Error;
    break;
  case Op::DeleteFast:
    Py_CLEAR(locals[oparg].value);
    locals[oparg].source.clear();
    locals[oparg].items.reset();
    locals[oparg].keywords.reset();
    mirror(oparg);
    break;
  case Op::MakeCell: {
    Slot &l = locals[oparg];
    PyObject *cell = PyCell_New(l.value);
    STEP_FAIL_IF_NULL(cell);
    if (!l.source.empty())
      regionState().cells->set(cell, l.source);
    Py_XDECREF(l.value);
    l.value = cell;
    l.source.clear();
    l.items.reset();
    l.keywords.reset();
    mirror(oparg);
    break;
  }
  case Op::CopyFreeVars: {
    // The function's cells become the frame's last `oparg` locals.
    int offset = co->co_nlocalsplus - oparg;
    for (int i = 0; i < oparg && f.closure; ++i) {
      PyObject *cell = PyTuple_GET_ITEM(f.closure, i);
      Py_INCREF(cell);
      Py_XSETREF(locals[offset + i].value, cell);
      mirror(offset + i);
      if (regionState().cells->find(cell))
        continue;
      PyObject *name = PyTuple_GET_ITEM(co->co_localsplusnames, offset + i);
      std::string src;
      if (call_.entry)
        src = std::string("L['") + PyUnicode_AsUTF8(name) + "']";
      else if (!call_.funcSource.empty())
        src = call_.funcSource + ".__closure__[" + std::to_string(i) +
              "].cell_contents";
      if (!src.empty())
        regionState().cells->set(cell, std::move(src));
    }
    break;
  }
  case Op::LoadDeref: {
    PyObject *cell = locals[oparg].value;
    PyObject *v = cell ? PyCell_GET(cell) : nullptr;
    if (!v) {
      unboundDeref(oparg);
      return Step::Error;
    }
    Py_INCREF(v);
    const std::string *src = regionState().cells->find(cell);
    std::string s = src ? *src : std::string();
    noteTensor(v, s);
    push(v, std::move(s));
    break;
  }
  case Op::StoreDeref: {
    Slot s = pop();
    PyObject *cell = locals[oparg].value;
    int rc = PyCell_Set(cell, s.value);
    Py_DECREF(s.value);
    if (rc < 0)
      return Step::Error;
    regionState().cells->set(cell, std::move(s.source));
    break;
  }
  case Op::DeleteDeref: {
    PyObject *cell = locals[oparg].value;
    if (!cell || !PyCell_GET(cell)) {
      unboundDeref(oparg);
      return Step::Error;
    }
    PyCell_Set(cell, nullptr);
    break;
  }
  case Op::LoadName: {
    // Module-level code (a whole-script region): names live in f_locals,
    // then globals, then builtins.
    PyObject *name = PyTuple_GET_ITEM(co->co_names, oparg);
    std::string src;
    if (f.locals) {
      r = PyObject_GetItem(f.locals, name); // new reference
      if (!r) {
        if (!PyErr_ExceptionMatches(PyExc_KeyError))
          return Step::Error;
        PyErr_Clear();
      } else if (f.locals == f.globals) {
        src = globalSource(name);
      }
    }
    if (!r)
      STEP_FAIL_IF_NULL(r = lookupGlobal(name, src));
    noteTensor(r, src);
    push(r, std::move(src));
    break;
  }
  case Op::StoreName:
  case Op::DeleteName: {
    PyObject *name = PyTuple_GET_ITEM(co->co_names, oparg);
    if (!f.locals) {
      PyErr_Format(PyExc_SystemError, "no locals when storing %R", name);
      return Step::Error;
    }
    int rc;
    if (op == Op::StoreName) {
      Slot v = pop();
      rc = PyObject_SetItem(f.locals, name, v.value);
      Py_DECREF(v.value);
    } else {
      rc = PyObject_DelItem(f.locals, name);
    }
    if (rc < 0)
      return Step::Error;
    break;
  }
  case Op::LoadBuildClass:
    r = PyDict_GetItemString(f.builtins, "__build_class__");
    if (!r) {
      PyErr_SetString(PyExc_NameError, "__build_class__ not found");
      return Step::Error;
    }
    push(Py_NewRef(r));
    break;
  case Op::SetupAnnotations:
    if (f.locals && !PyMapping_HasKeyString(f.locals, "__annotations__")) {
      PyObject *d = PyDict_New();
      int rc = d ? PyMapping_SetItemString(f.locals, "__annotations__", d) : -1;
      Py_XDECREF(d);
      if (rc < 0)
        return Step::Error;
    }
    break;
  case Op::LoadConst:
    r = PyTuple_GET_ITEM(co->co_consts, oparg);
    Py_INCREF(r);
    push(r);
    stack.back().constant = true;
    break;
  case Op::LoadGlobal: {
    PyObject *name = PyTuple_GET_ITEM(co->co_names, oparg >> 1);
    std::string src;
    STEP_FAIL_IF_NULL(r = lookupGlobal(name, src));
    noteTensor(r, src);
    if (oparg & 1)
      pushCallable(r, std::move(src));
    else
      push(r, std::move(src));
    break;
  }
  case Op::StoreGlobal: {
    noteStore(globalSource(PyTuple_GET_ITEM(co->co_names, oparg)));
    Slot v = pop();
    int rc = PyDict_SetItem(f.globals, PyTuple_GET_ITEM(co->co_names, oparg),
                            v.value);
    Py_DECREF(v.value);
    if (rc < 0)
      return Step::Error;
    break;
  }
  case Op::DeleteGlobal:
    noteStore(globalSource(PyTuple_GET_ITEM(co->co_names, oparg)));
    if (PyDict_DelItem(f.globals, PyTuple_GET_ITEM(co->co_names, oparg)) < 0)
      return Step::Error;
    break;
  case Op::LoadAttr: {
    PyObject *name = PyTuple_GET_ITEM(co->co_names, oparg >> 1);
    Slot owner = pop();
    {
      Passthrough p; // properties and __getattr__ run natively
      r = PyObject_GetAttr(owner.value, name);
    }
    std::string src = owner.source.empty()
                          ? std::string()
                          : owner.source + "." + PyUnicode_AsUTF8(name);
    if (isTensor(owner.value) &&
        PyUnicode_CompareWithASCIIString(name, "shape") == 0)
      src = tensorSource(owner.value, owner.source) + ".size()";
    else if (src.empty() && r && isGuardableScalar(r) && !isTensor(owner.value))
      // A Python value read from an object the evaluator cannot name (a
      // cache layer reached through **kwargs): guarded by its path from the
      // arguments once the call ends, as a named read is guarded now.
      callTracker("on_anonymous_read",
                  Py_BuildValue("(OOO)", owner.value, name, r));
    Py_DECREF(owner.value);
    STEP_FAIL_IF_NULL(r);
    noteTensor(r, src);
    // A method load pushes the bound method with a NULL: CALL reads that
    // pair as a callable without self.
    if (oparg & 1)
      pushCallable(r, std::move(src));
    else
      push(r, std::move(src));
    break;
  }
  case Op::LoadSuperAttr: { // super().name: [super, __class__, self]
    PyObject *name = PyTuple_GET_ITEM(co->co_names, oparg >> 2);
    Slot self = pop(), cls = pop(), global = pop();
    PyObject *argv[] = {cls.value, self.value};
    PyObject *super;
    {
      Passthrough p;
      // The zero-argument form (oparg bit 1 clear) would make super() look
      // for __class__ and self in the frame; the compiler put both on the
      // stack, so the builtin gets them as arguments.
      bool builtin =
          global.value == reinterpret_cast<PyObject *>(&PySuper_Type);
      super = PyObject_Vectorcall(global.value, argv,
                                  (oparg & 2) || builtin ? 2 : 0, nullptr);
      r = super ? PyObject_GetAttr(super, name) : nullptr;
    }
    Py_XDECREF(super);
    Py_DECREF(self.value), Py_DECREF(cls.value), Py_DECREF(global.value);
    STEP_FAIL_IF_NULL(r);
    if (oparg & 1)
      pushCallable(r);
    else
      push(r);
    break;
  }
  case Op::StoreAttr:
  case Op::DeleteAttr: {
    PyObject *name = PyTuple_GET_ITEM(co->co_names, oparg);
    Slot owner = pop();
    Slot value = op == Op::StoreAttr ? pop() : Slot{};
    if (!owner.source.empty())
      noteStore(owner.source + "." + PyUnicode_AsUTF8(name), &value);
    else
      noteAnonymousStore(owner.value, name, true, &value);
    int rc;
    {
      Passthrough p;
      rc = PyObject_SetAttr(owner.value, name, value.value);
    }
    Py_DECREF(owner.value);
    Py_XDECREF(value.value);
    if (rc < 0)
      return Step::Error;
    break;
  }
  case Op::ImportName: {
    Slot fromlist = pop(), level = pop();
    {
      Passthrough p;
      r = PyImport_ImportModuleLevelObject(
          PyTuple_GET_ITEM(co->co_names, oparg), f.globals, Py_None,
          fromlist.value, PyLong_AsLong(level.value));
    }
    Py_DECREF(fromlist.value), Py_DECREF(level.value);
    STEP_FAIL_IF_NULL(r);
    push(r);
    break;
  }
  case Op::ImportFrom: {
    PyObject *name = PyTuple_GET_ITEM(co->co_names, oparg);
    {
      Passthrough p;
      r = PyObject_GetAttr(stack.back().value, name);
    }
    STEP_FAIL_IF_NULL(r);
    push(r);
    break;
  }
  default:
    return Step::Unhandled;
  }
  return Step::Done;
}

} // namespace dynoc::capture
