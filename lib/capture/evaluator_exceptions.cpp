//===- evaluator_exceptions.cpp - exceptions and with ---------------------===//
//
// raise, the exception table's handlers, try/except and except*, with
// blocks, assert and PRINT_EXPR, as CPython 3.11's loop runs them
// (tracebacks, lasti, the exception state).
//
//===----------------------------------------------------------------------===//
#include "evaluator_internal.h"
#include "exception_table.h"
#include "exceptions.h"

namespace dynoc::capture {

PyObject *lookupSpecial(PyObject *obj, const char *name) {
  PyObject *key = PyUnicode_InternFromString(name);
  if (!key)
    return nullptr;
  PyObject *attr = _PyType_Lookup(Py_TYPE(obj), key);
  Py_DECREF(key);
  if (!attr)
    return nullptr;
  if (descrgetfunc get = Py_TYPE(attr)->tp_descr_get)
    return get(attr, obj, reinterpret_cast<PyObject *>(Py_TYPE(obj)));
  return Py_NewRef(attr);
}

/// RAISE_VARARGS: `raise`, `raise exc` and `raise exc from cause`.
int Evaluator::raise(int oparg) {
  if (oparg == 0) {
    PyObject *type, *value, *tb;
    PyErr_GetExcInfo(&type, &value, &tb);
    if (!value || value == Py_None) {
      Py_XDECREF(type), Py_XDECREF(value), Py_XDECREF(tb);
      PyErr_SetString(PyExc_RuntimeError, "No active exception to reraise");
      return -1;
    }
    PyErr_Restore(type, value, tb);
    return 1; // a bare `raise` adds no traceback entry (as CPython)
  }
  // CPython's do_raise, with its messages.
  Slot cause = oparg == 2 ? pop() : Slot{};
  Slot e = pop();
  PyObject *inst = nullptr;
  if (PyExceptionClass_Check(e.value)) {
    inst = PyObject_CallNoArgs(e.value);
    if (inst && !PyExceptionInstance_Check(inst)) {
      PyErr_Format(PyExc_TypeError,
                   "calling %R should have returned an instance of "
                   "BaseException, not %R",
                   e.value, Py_TYPE(inst));
      Py_CLEAR(inst);
    }
  } else if (PyExceptionInstance_Check(e.value)) {
    inst = e.value;
    Py_INCREF(inst);
  } else {
    PyErr_SetString(PyExc_TypeError,
                    "exceptions must derive from BaseException");
  }
  if (inst && cause.value) {
    PyObject *fixed = nullptr; // a new reference, or null for `from None`
    bool ok = true;
    if (PyExceptionClass_Check(cause.value)) {
      fixed = PyObject_CallNoArgs(cause.value);
      ok = fixed != nullptr;
    } else if (PyExceptionInstance_Check(cause.value)) {
      fixed = Py_NewRef(cause.value);
    } else if (cause.value != Py_None) {
      PyErr_SetString(PyExc_TypeError,
                      "exception causes must derive from BaseException");
      ok = false;
    }
    if (ok)
      PyException_SetCause(inst, fixed); // steals `fixed`
    else
      Py_CLEAR(inst);
  }
  if (inst) {
    PyErr_SetObject(reinterpret_cast<PyObject *>(Py_TYPE(inst)), inst);
    Py_DECREF(inst);
  }
  Py_DECREF(e.value);
  Py_XDECREF(cause.value);
  return -1;
}

/// An exception was raised at `pc`: as CPython does, unwind the value stack
/// to the handler's depth, push the faulting offset if asked and the
/// exception, and continue at the handler. False when no handler covers pc.
bool Evaluator::unwindToHandler() {
  ExceptionHandler h;
  if (!findExceptionHandler(co, pc, h)) {
    if (lasti >= 0) // CPython's RERAISE left the frame at the saved offset
      pc = lasti;   // (what its f_lineno shows after the frame ended)
    lasti = -1;
    return false;
  }
  if (Py_ssize_t(stack.size()) < h.depth)
    return false;
  dropTop(stack.size() - h.depth);
  if (h.pushLasti)
    push(PyLong_FromSsize_t(lasti >= 0 ? lasti : pc));
  lasti = -1;
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  PyErr_NormalizeException(&type, &value, &tb);
  PyException_SetTraceback(value, tb ? tb : Py_None);
  Py_XDECREF(tb);
  Py_XDECREF(type);
  push(value);
  pc = h.target;
  return true;
}

/// Opcodes for raise, try/except/except*, with, assert and PRINT_EXPR.
Evaluator::Step Evaluator::execExceptions(Op op, int oparg) {
  PyObject *r = nullptr;
  switch (op) {
  case Op::RaiseVarargs:
    if (raise(oparg) == 1)
      reraising = true;
    return Step::Error;
  case Op::Reraise: {
    if (oparg) {
      // The offset the handler saved is what an outer handler sees as
      // lasti; the handler lookup itself still uses this RERAISE's pc.
      PyObject *saved = stack[stack.size() - 1 - oparg].value;
      if (PyLong_Check(saved))
        lasti = PyLong_AsSsize_t(saved);
    }
    reraising = true;
    PyObject *val = pop().value; // stolen by PyErr_Restore
    PyObject *type = reinterpret_cast<PyObject *>(Py_TYPE(val));
    Py_INCREF(type);
    PyErr_Restore(type, val, PyException_GetTraceback(val));
    return Step::Error;
  }
  case Op::PushExcInfo: {
    Slot value = pop();
    PyObject *type, *prev, *tb;
    PyErr_GetExcInfo(&type, &prev, &tb);
    Py_XDECREF(type), Py_XDECREF(tb);
    push(prev ? prev : Py_NewRef(Py_None));
    Py_INCREF(value.value);
    PyErr_SetExcInfo(nullptr, value.value, nullptr);
    push(value.value);
    break;
  }
  case Op::PopExcept: {
    Slot prev = pop();
    if (prev.value == Py_None) {
      Py_DECREF(prev.value);
      PyErr_SetExcInfo(nullptr, nullptr, nullptr);
    } else {
      PyErr_SetExcInfo(nullptr, prev.value, nullptr);
    }
    break;
  }
  case Op::CheckExcMatch: {
    Slot right = pop();
    if (!validExceptType(right.value)) {
      Py_DECREF(right.value);
      return Step::Error;
    }
    int match = PyErr_GivenExceptionMatches(stack.back().value, right.value);
    Py_DECREF(right.value);
    push(Py_NewRef(match ? Py_True : Py_False));
    break;
  }
  case Op::CheckEgMatch: { // except*: [exc] -> [rest, match] or [exc, None]
    Slot type = pop();
    PyObject *match = nullptr, *rest = nullptr;
    bool ok = validExceptStarType(type.value) &&
              matchExceptionGroup(stack.back().value, type.value, match, rest);
    Py_DECREF(type.value);
    if (!ok)
      return Step::Error;
    if (match == Py_None) {
      Py_DECREF(rest);
      push(match);
    } else {
      Slot exc = pop();
      Py_DECREF(exc.value);
      push(rest);
      push(match);
      PyErr_SetExcInfo(nullptr, Py_NewRef(match), nullptr);
    }
    break;
  }
  case Op::PrepReraiseStar: {
    Slot excs = pop(), orig = pop();
    r = prepReraiseStar(orig.value, excs.value);
    Py_DECREF(excs.value), Py_DECREF(orig.value);
    STEP_FAIL_IF_NULL(r);
    push(r);
    break;
  }
  case Op::LoadAssertionError:
    push(Py_NewRef(PyExc_AssertionError));
    break;
  case Op::PrintExpr: { // interactive code ("single" mode): sys.displayhook
    Slot v = pop();
    PyObject *hook = PySys_GetObject("displayhook"); // borrowed
    if (!hook) {
      PyErr_SetString(PyExc_RuntimeError, "lost sys.displayhook");
      Py_DECREF(v.value);
      return Step::Error;
    }
    Py_INCREF(hook);
    // A call like any other: the default hook prints, a side effect.
    std::vector<PyObject *> args{v.value};
    std::vector<std::string> sources{v.source};
    PyObject *res = invoke(hook, "", args, sources, nullptr);
    Py_DECREF(hook);
    Py_DECREF(v.value);
    STEP_FAIL_IF_NULL(res);
    Py_DECREF(res);
    if (oparg) // 3.12's CALL_INTRINSIC_1 leaves None
      push(Py_NewRef(Py_None));
    break;
  }
  case Op::BeforeWith: {
    Slot mgr = pop();
    PyObject *exit = nullptr, *res = nullptr;
    {
      Passthrough p;
      // Special-method lookup on the type, as CPython's BEFORE_WITH.
      PyObject *enter = lookupSpecial(mgr.value, "__enter__");
      if (!enter && !PyErr_Occurred())
        PyErr_Format(PyExc_TypeError,
                     "'%.200s' object does not support the context manager "
                     "protocol",
                     Py_TYPE(mgr.value)->tp_name);
      exit = enter ? lookupSpecial(mgr.value, "__exit__") : nullptr;
      if (enter && !exit && !PyErr_Occurred())
        PyErr_Format(PyExc_TypeError,
                     "'%.200s' object does not support the context manager "
                     "protocol (missed __exit__ method)",
                     Py_TYPE(mgr.value)->tp_name);
      res = exit ? PyObject_CallNoArgs(enter) : nullptr;
      Py_XDECREF(enter);
    }
    Py_DECREF(mgr.value);
    if (!res) {
      Py_XDECREF(exit);
      return Step::Error;
    }
    push(exit);
    push(res);
    break;
  }
  case Op::WithExceptStart: {
    // Stack: __exit__, lasti, previous exception, exception (top).
    PyObject *exit = stack[stack.size() - 4].value;
    PyObject *val = stack.back().value;
    PyObject *tb = PyException_GetTraceback(val);
    {
      Passthrough p;
      r = PyObject_CallFunctionObjArgs(
          exit, reinterpret_cast<PyObject *>(Py_TYPE(val)), val,
          tb ? tb : Py_None, nullptr);
    }
    Py_XDECREF(tb);
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
