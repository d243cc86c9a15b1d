//===- evaluator.cpp - dynoc's bytecode evaluator with shadow values ------===//
//
// Runs a CPython 3.11 frame for real, one instruction at a time, while keeping
// a shadow for every value: the source it came from, in Dynamo's words
// (`L['self'].fc1.weight`, `G['SCALE']`). Shadows are how the recorder names
// parameters and inputs, how Python values that steer control flow become
// guards and how a tensor reaching Python control flow becomes a graph break.
//
// Calls into user code and nn.Module forwards are followed: the callee's frame
// comes back through the PEP 523 hook and runs here too, with its arguments'
// shadows. Everything else (torch ops, builtins, library code) runs natively;
// its ATen calls are recorded at the dispatcher by the tracker.
//
//===----------------------------------------------------------------------===//
#include "evaluator.h"
#include "frame_hook.h"

#include <opcode.h>

#include <string>
#include <vector>

namespace dynoc::capture {

Runtime &runtime() {
  static Runtime r;
  return r;
}

RegionState &regionState() {
  static thread_local RegionState s;
  return s;
}

namespace {

struct Slot {
  PyObject *value = nullptr; // owned; may be null (PUSH_NULL)
  std::string source;        // empty: unknown origin
  Py_ssize_t iterIndex = 0;  // for iterators: the next item's index
};

/// A scoped flag: calls made while it lives are not followed.
struct Passthrough {
  bool saved;
  Passthrough() : saved(regionState().passthrough) {
    regionState().passthrough = true;
  }
  ~Passthrough() { regionState().passthrough = saved; }
};

const char *unsupportedReason(PyCodeObject *co, int &badOpcode) {
  badOpcode = -1;
  if (co->co_ncellvars || co->co_nfreevars)
    return "closures and cell variables";
  if (PyBytes_GET_SIZE(co->co_exceptiontable) > 0)
    return "try/except/with blocks";
  PyObject *code = PyCode_GetCode(co);
  if (!code)
    return "unreadable bytecode";
  const auto *instrs =
      reinterpret_cast<const uint8_t *>(PyBytes_AS_STRING(code));
  Py_ssize_t n = PyBytes_GET_SIZE(code) / 2;
  const char *reason = nullptr;
  for (Py_ssize_t i = 0; i < n;
       i += 1 + runtime().inlineCaches[instrs[2 * i]]) {
    switch (instrs[2 * i]) {
    case CACHE:
    case NOP:
    case RESUME:
    case PRECALL:
    case POP_TOP:
    case PUSH_NULL:
    case LOAD_FAST:
    case STORE_FAST:
    case DELETE_FAST:
    case LOAD_CONST:
    case LOAD_GLOBAL:
    case LOAD_ATTR:
    case LOAD_METHOD:
    case STORE_ATTR:
    case KW_NAMES:
    case CALL:
    case BINARY_OP:
    case BINARY_SUBSCR:
    case STORE_SUBSCR:
    case COMPARE_OP:
    case IS_OP:
    case CONTAINS_OP:
    case UNARY_NEGATIVE:
    case UNARY_POSITIVE:
    case UNARY_NOT:
    case UNARY_INVERT:
    case BUILD_TUPLE:
    case BUILD_LIST:
    case BUILD_MAP:
    case BUILD_CONST_KEY_MAP:
    case BUILD_SLICE:
    case FORMAT_VALUE:
    case BUILD_STRING:
    case RETURN_VALUE:
    case POP_JUMP_FORWARD_IF_FALSE:
    case POP_JUMP_FORWARD_IF_TRUE:
    case POP_JUMP_BACKWARD_IF_FALSE:
    case POP_JUMP_BACKWARD_IF_TRUE:
    case POP_JUMP_FORWARD_IF_NONE:
    case POP_JUMP_FORWARD_IF_NOT_NONE:
    case POP_JUMP_BACKWARD_IF_NONE:
    case POP_JUMP_BACKWARD_IF_NOT_NONE:
    case JUMP_IF_FALSE_OR_POP:
    case JUMP_IF_TRUE_OR_POP:
    case JUMP_FORWARD:
    case JUMP_BACKWARD:
    case JUMP_BACKWARD_NO_INTERRUPT:
    case GET_ITER:
    case FOR_ITER:
    case COPY:
    case SWAP:
    case UNPACK_SEQUENCE:
    case EXTENDED_ARG:
    case RAISE_VARARGS:
      break;
    default:
      badOpcode = instrs[2 * i];
      reason = "an unsupported opcode";
      i = n;
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
  PyObject *r = PyObject_CallOneArg(rt.followPredicate, code);
  bool follow = r && PyObject_IsTrue(r) == 1;
  Py_XDECREF(r);
  if (!r)
    PyErr_Clear();
  PyDict_SetItem(rt.followCache, code, follow ? Py_True : Py_False);
  return follow;
}

class Evaluator {
public:
  Evaluator(const dynoc_frame_view &f, std::vector<std::string> argSources)
      : f(f), co(f.code) {
    int n = co->co_nlocalsplus;
    locals.resize(n);
    for (int i = 0; i < n; ++i) {
      locals[i].value = f.localsplus[i];
      Py_XINCREF(locals[i].value);
      if (i < (int)argSources.size())
        locals[i].source = std::move(argSources[i]);
    }
  }
  ~Evaluator() {
    for (Slot &s : locals)
      Py_XDECREF(s.value);
    for (Slot &s : stack)
      Py_XDECREF(s.value);
    Py_XDECREF(code);
  }

  PyObject *run();

private:
  void push(PyObject *v, std::string src = {}) {
    stack.push_back({v, std::move(src)});
  }
  Slot pop() {
    Slot s = std::move(stack.back());
    stack.pop_back();
    return s;
  }
  int line() { return PyCode_Addr2Line(co, int(pc * 2)); }
  bool isTensor(PyObject *v) {
    return v && PyObject_TypeCheck(v, runtime().tensorType);
  }
  void noteTensor(PyObject *v, const std::string &src) {
    if (!src.empty() && isTensor(v))
      callTracker("on_tensor", Py_BuildValue("(Os)", v, src.c_str()));
  }
  void callTracker(const char *method, PyObject *args) {
    PyObject *tracker = regionState().tracker;
    if (!tracker || !args) {
      Py_XDECREF(args);
      return;
    }
    PyObject *m = PyObject_GetAttrString(tracker, method);
    PyObject *r = m ? PyObject_Call(m, args, nullptr) : nullptr;
    Py_XDECREF(m);
    Py_XDECREF(r);
    Py_DECREF(args);
    if (!r)
      PyErr_WriteUnraisable(tracker);
  }
  /// Truth of a branch condition: a tensor here is a graph break; a Python
  /// value with a known source becomes a guard.
  int truth(const Slot &s);
  PyObject *call(int nargs);
  PyObject *callFollowed(PyObject *func, std::vector<PyObject *> &args,
                         std::vector<std::string> &sources, PyObject *kwnames);

  const dynoc_frame_view &f;
  PyCodeObject *co;
  PyObject *code = nullptr;
  std::vector<Slot> locals, stack;
  PyObject *kwnames = nullptr; // borrowed from co_consts
  Py_ssize_t pc = 0;
};

int Evaluator::truth(const Slot &s) {
  if (isTensor(s.value))
    callTracker("on_break",
                Py_BuildValue("(sOi)",
                              "a tensor's value decides Python control flow",
                              co->co_filename, line()));
  else if (!s.source.empty() &&
           (s.value == Py_None || PyBool_Check(s.value) ||
            PyLong_Check(s.value) || PyFloat_Check(s.value) ||
            PyUnicode_Check(s.value)))
    callTracker("on_guard", Py_BuildValue("(sO)", s.source.c_str(), s.value));
  Passthrough p;
  return PyObject_IsTrue(s.value);
}

PyObject *Evaluator::callFollowed(PyObject *func, std::vector<PyObject *> &args,
                                  std::vector<std::string> &sources,
                                  PyObject *kw) {
  RegionState &st = regionState();
  st.pendingCode = reinterpret_cast<PyCodeObject *>(PyFunction_GET_CODE(func));
  st.pendingSources = sources;
  Py_ssize_t nkw = kw ? PyTuple_GET_SIZE(kw) : 0;
  PyObject *r = PyObject_Vectorcall(func, args.data(), args.size() - nkw, kw);
  st.pendingCode = nullptr;
  return r;
}

PyObject *Evaluator::call(int nargs) {
  // Stack: [callable-or-NULL, self-or-callable, args...]
  std::vector<PyObject *> args;
  std::vector<std::string> sources;
  size_t base = stack.size() - nargs;
  Slot &first = stack[base - 2], &second = stack[base - 1];
  PyObject *callable;
  std::string callableSrc;
  if (first.value) {
    callable = first.value, callableSrc = first.source;
    args.push_back(second.value), sources.push_back(second.source);
  } else {
    callable = second.value, callableSrc = second.source;
  }
  for (size_t i = base; i < stack.size(); ++i)
    args.push_back(stack[i].value), sources.push_back(stack[i].source);
  PyObject *kw = kwnames;
  kwnames = nullptr;
  PyObject *result = nullptr;
  Runtime &rt = runtime();

  // nn.Module without hooks: follow its forward directly.
  if (PyObject_IsInstance(callable, rt.moduleType) == 1) {
    PyObject *fwd = PyObject_CallOneArg(rt.forwardOf, callable);
    if (!fwd)
      return nullptr;
    if (fwd != Py_None) {
      args.insert(args.begin(), callable);
      sources.insert(sources.begin(), callableSrc);
      result = callFollowed(fwd, args, sources, kw);
      Py_DECREF(fwd);
      goto done;
    }
    Py_DECREF(fwd);
  }
  if (PyMethod_Check(callable) &&
      PyFunction_Check(PyMethod_GET_FUNCTION(callable)) &&
      shouldFollow(PyMethod_GET_FUNCTION(callable))) {
    PyObject *self = PyMethod_GET_SELF(callable);
    std::string selfSrc;
    auto dot = callableSrc.rfind('.');
    if (dot != std::string::npos)
      selfSrc = callableSrc.substr(0, dot);
    args.insert(args.begin(), self);
    sources.insert(sources.begin(), selfSrc);
    result = callFollowed(PyMethod_GET_FUNCTION(callable), args, sources, kw);
  } else if (PyFunction_Check(callable) && shouldFollow(callable)) {
    result = callFollowed(callable, args, sources, kw);
  } else {
    Passthrough p;
    Py_ssize_t nkw = kw ? PyTuple_GET_SIZE(kw) : 0;
    result = PyObject_Vectorcall(callable, args.data(), args.size() - nkw, kw);
  }
done:
  for (size_t i = base - 2; i < stack.size(); ++i)
    Py_XDECREF(stack[i].value);
  stack.resize(base - 2);
  return result;
}

PyObject *binaryOp(int op, PyObject *a, PyObject *b) {
  switch (op) {
  case NB_ADD:
    return PyNumber_Add(a, b);
  case NB_AND:
    return PyNumber_And(a, b);
  case NB_FLOOR_DIVIDE:
    return PyNumber_FloorDivide(a, b);
  case NB_LSHIFT:
    return PyNumber_Lshift(a, b);
  case NB_MATRIX_MULTIPLY:
    return PyNumber_MatrixMultiply(a, b);
  case NB_MULTIPLY:
    return PyNumber_Multiply(a, b);
  case NB_REMAINDER:
    return PyNumber_Remainder(a, b);
  case NB_OR:
    return PyNumber_Or(a, b);
  case NB_POWER:
    return PyNumber_Power(a, b, Py_None);
  case NB_RSHIFT:
    return PyNumber_Rshift(a, b);
  case NB_SUBTRACT:
    return PyNumber_Subtract(a, b);
  case NB_TRUE_DIVIDE:
    return PyNumber_TrueDivide(a, b);
  case NB_XOR:
    return PyNumber_Xor(a, b);
  case NB_INPLACE_ADD:
    return PyNumber_InPlaceAdd(a, b);
  case NB_INPLACE_AND:
    return PyNumber_InPlaceAnd(a, b);
  case NB_INPLACE_FLOOR_DIVIDE:
    return PyNumber_InPlaceFloorDivide(a, b);
  case NB_INPLACE_LSHIFT:
    return PyNumber_InPlaceLshift(a, b);
  case NB_INPLACE_MATRIX_MULTIPLY:
    return PyNumber_InPlaceMatrixMultiply(a, b);
  case NB_INPLACE_MULTIPLY:
    return PyNumber_InPlaceMultiply(a, b);
  case NB_INPLACE_REMAINDER:
    return PyNumber_InPlaceRemainder(a, b);
  case NB_INPLACE_OR:
    return PyNumber_InPlaceOr(a, b);
  case NB_INPLACE_POWER:
    return PyNumber_InPlacePower(a, b, Py_None);
  case NB_INPLACE_RSHIFT:
    return PyNumber_InPlaceRshift(a, b);
  case NB_INPLACE_SUBTRACT:
    return PyNumber_InPlaceSubtract(a, b);
  case NB_INPLACE_TRUE_DIVIDE:
    return PyNumber_InPlaceTrueDivide(a, b);
  case NB_INPLACE_XOR:
    return PyNumber_InPlaceXor(a, b);
  }
  PyErr_Format(PyExc_SystemError, "dynoc: unknown BINARY_OP %d", op);
  return nullptr;
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

PyObject *Evaluator::run() {
  code = PyCode_GetCode(co);
  if (!code)
    return nullptr;
  const auto *instrs =
      reinterpret_cast<const uint8_t *>(PyBytes_AS_STRING(code));
  Py_ssize_t n = PyBytes_GET_SIZE(code) / 2;
  const unsigned char *caches = runtime().inlineCaches;
  int ext = 0;
  while (pc < n) {
    int opcode = instrs[2 * pc];
    int oparg = instrs[2 * pc + 1] | ext;
    ext = 0;
    Py_ssize_t next = pc + 1 + caches[opcode];
    PyObject *r = nullptr;
#define FAIL_IF_NULL(x)                                                        \
  if (!(x))                                                                    \
    return nullptr;
    switch (opcode) {
    case CACHE:
    case NOP:
    case RESUME:
    case PRECALL:
      break;
    case EXTENDED_ARG:
      ext = oparg << 8;
      break;
    case POP_TOP:
      Py_XDECREF(pop().value);
      break;
    case PUSH_NULL:
      push(nullptr);
      break;
    case LOAD_FAST: {
      Slot &l = locals[oparg];
      if (!l.value) {
        PyErr_Format(PyExc_UnboundLocalError,
                     "cannot access local variable '%U' where it is not "
                     "associated with a value",
                     PyTuple_GetItem(co->co_localsplusnames, oparg));
        return nullptr;
      }
      Py_INCREF(l.value);
      push(l.value, l.source);
      break;
    }
    case STORE_FAST: {
      Slot s = pop();
      Py_XDECREF(locals[oparg].value);
      locals[oparg].value = s.value;
      locals[oparg].source = std::move(s.source);
      break;
    }
    case DELETE_FAST:
      Py_CLEAR(locals[oparg].value);
      locals[oparg].source.clear();
      break;
    case LOAD_CONST:
      r = PyTuple_GET_ITEM(co->co_consts, oparg);
      Py_INCREF(r);
      push(r);
      break;
    case LOAD_GLOBAL: {
      PyObject *name = PyTuple_GET_ITEM(co->co_names, oparg >> 1);
      if (oparg & 1)
        push(nullptr);
      std::string src;
      r = PyDict_GetItemWithError(f.globals, name);
      if (r)
        src = std::string("G['") + PyUnicode_AsUTF8(name) + "']";
      else if (!PyErr_Occurred())
        r = PyDict_GetItemWithError(f.builtins, name);
      if (!r) {
        if (!PyErr_Occurred())
          PyErr_Format(PyExc_NameError, "name '%U' is not defined", name);
        return nullptr;
      }
      Py_INCREF(r);
      noteTensor(r, src);
      push(r, std::move(src));
      break;
    }
    case LOAD_ATTR:
    case LOAD_METHOD: {
      PyObject *name = PyTuple_GET_ITEM(co->co_names, oparg);
      Slot owner = pop();
      {
        Passthrough p; // properties and __getattr__ run natively
        r = PyObject_GetAttr(owner.value, name);
      }
      std::string src = owner.source.empty()
                            ? std::string()
                            : owner.source + "." + PyUnicode_AsUTF8(name);
      Py_DECREF(owner.value);
      FAIL_IF_NULL(r);
      noteTensor(r, src);
      if (opcode == LOAD_METHOD)
        push(nullptr);
      push(r, std::move(src));
      break;
    }
    case STORE_ATTR: {
      PyObject *name = PyTuple_GET_ITEM(co->co_names, oparg);
      Slot owner = pop(), value = pop();
      int rc;
      {
        Passthrough p;
        rc = PyObject_SetAttr(owner.value, name, value.value);
      }
      Py_DECREF(owner.value);
      Py_DECREF(value.value);
      if (rc < 0)
        return nullptr;
      break;
    }
    case KW_NAMES:
      kwnames = PyTuple_GET_ITEM(co->co_consts, oparg);
      break;
    case CALL:
      r = call(oparg);
      FAIL_IF_NULL(r);
      push(r);
      break;
    case BINARY_OP: {
      Slot b = pop(), a = pop();
      {
        Passthrough p;
        r = binaryOp(oparg, a.value, b.value);
      }
      Py_DECREF(a.value);
      Py_DECREF(b.value);
      FAIL_IF_NULL(r);
      push(r);
      break;
    }
    case BINARY_SUBSCR: {
      Slot key = pop(), container = pop();
      {
        Passthrough p;
        r = PyObject_GetItem(container.value, key.value);
      }
      std::string src = itemSource(container.source, key.value);
      Py_DECREF(container.value);
      Py_DECREF(key.value);
      FAIL_IF_NULL(r);
      noteTensor(r, src);
      push(r, std::move(src));
      break;
    }
    case STORE_SUBSCR: {
      Slot key = pop(), container = pop(), value = pop();
      int rc;
      {
        Passthrough p;
        rc = PyObject_SetItem(container.value, key.value, value.value);
      }
      Py_DECREF(key.value), Py_DECREF(container.value), Py_DECREF(value.value);
      if (rc < 0)
        return nullptr;
      break;
    }
    case COMPARE_OP: {
      Slot b = pop(), a = pop();
      {
        Passthrough p;
        r = PyObject_RichCompare(a.value, b.value, oparg);
      }
      Py_DECREF(a.value), Py_DECREF(b.value);
      FAIL_IF_NULL(r);
      push(r);
      break;
    }
    case IS_OP: {
      Slot b = pop(), a = pop();
      r = ((a.value == b.value) ^ oparg) ? Py_True : Py_False;
      Py_INCREF(r);
      Py_DECREF(a.value), Py_DECREF(b.value);
      push(r);
      break;
    }
    case CONTAINS_OP: {
      Slot b = pop(), a = pop();
      int rc;
      {
        Passthrough p;
        rc = PySequence_Contains(b.value, a.value);
      }
      Py_DECREF(a.value), Py_DECREF(b.value);
      if (rc < 0)
        return nullptr;
      r = (rc ^ oparg) ? Py_True : Py_False;
      Py_INCREF(r);
      push(r);
      break;
    }
    case UNARY_NEGATIVE:
    case UNARY_POSITIVE:
    case UNARY_INVERT: {
      Slot a = pop();
      {
        Passthrough p;
        r = opcode == UNARY_NEGATIVE   ? PyNumber_Negative(a.value)
            : opcode == UNARY_POSITIVE ? PyNumber_Positive(a.value)
                                       : PyNumber_Invert(a.value);
      }
      Py_DECREF(a.value);
      FAIL_IF_NULL(r);
      push(r);
      break;
    }
    case UNARY_NOT: {
      Slot a = pop();
      int t = truth(a);
      Py_DECREF(a.value);
      if (t < 0)
        return nullptr;
      r = t ? Py_False : Py_True;
      Py_INCREF(r);
      push(r);
      break;
    }
    case FORMAT_VALUE: {
      // An f-string's {value!conv:spec}, as CPython's ceval does it.
      PyObject *spec = (oparg & 0x4) ? pop().value : nullptr;
      PyObject *v = pop().value;
      PyObject *conv = v;
      switch (oparg & 0x3) {
      case 1:
        conv = PyObject_Str(v);
        break;
      case 2:
        conv = PyObject_Repr(v);
        break;
      case 3:
        conv = PyObject_ASCII(v);
        break;
      }
      if (conv != v)
        Py_DECREF(v);
      if (!conv) {
        Py_XDECREF(spec);
        return nullptr;
      }
      if (PyUnicode_CheckExact(conv) && !spec) {
        r = conv;
      } else {
        r = PyObject_Format(conv, spec);
        Py_DECREF(conv);
      }
      Py_XDECREF(spec);
      FAIL_IF_NULL(r);
      push(r);
      break;
    }
    case BUILD_STRING: {
      PyObject *parts = PyTuple_New(oparg);
      FAIL_IF_NULL(parts);
      for (int i = oparg - 1; i >= 0; --i)
        PyTuple_SET_ITEM(parts, i, pop().value);
      PyObject *empty = PyUnicode_FromString("");
      r = empty ? PyUnicode_Join(empty, parts) : nullptr;
      Py_XDECREF(empty);
      Py_DECREF(parts);
      FAIL_IF_NULL(r);
      push(r);
      break;
    }
    case BUILD_TUPLE:
    case BUILD_LIST: {
      r = opcode == BUILD_TUPLE ? PyTuple_New(oparg) : PyList_New(oparg);
      FAIL_IF_NULL(r);
      for (int i = oparg - 1; i >= 0; --i) {
        PyObject *v = pop().value;
        if (opcode == BUILD_TUPLE)
          PyTuple_SET_ITEM(r, i, v);
        else
          PyList_SET_ITEM(r, i, v);
      }
      push(r);
      break;
    }
    case BUILD_MAP: {
      r = PyDict_New();
      FAIL_IF_NULL(r);
      size_t base = stack.size() - 2 * oparg;
      int rc = 0;
      for (int i = 0; i < oparg && rc == 0; ++i)
        rc = PyDict_SetItem(r, stack[base + 2 * i].value,
                            stack[base + 2 * i + 1].value);
      for (size_t i = base; i < stack.size(); ++i)
        Py_DECREF(stack[i].value);
      stack.resize(base);
      if (rc < 0) {
        Py_DECREF(r);
        return nullptr;
      }
      push(r);
      break;
    }
    case BUILD_CONST_KEY_MAP: {
      Slot keys = pop();
      r = PyDict_New();
      FAIL_IF_NULL(r);
      size_t base = stack.size() - oparg;
      int rc = 0;
      for (int i = 0; i < oparg && rc == 0; ++i)
        rc = PyDict_SetItem(r, PyTuple_GET_ITEM(keys.value, i),
                            stack[base + i].value);
      for (size_t i = base; i < stack.size(); ++i)
        Py_DECREF(stack[i].value);
      stack.resize(base);
      Py_DECREF(keys.value);
      if (rc < 0) {
        Py_DECREF(r);
        return nullptr;
      }
      push(r);
      break;
    }
    case BUILD_SLICE: {
      Slot step = oparg == 3 ? pop() : Slot{};
      Slot stop = pop(), start = pop();
      r = PySlice_New(start.value, stop.value, step.value);
      Py_DECREF(start.value), Py_DECREF(stop.value), Py_XDECREF(step.value);
      FAIL_IF_NULL(r);
      push(r);
      break;
    }
    case RETURN_VALUE:
      return pop().value;
    case POP_JUMP_FORWARD_IF_FALSE:
    case POP_JUMP_FORWARD_IF_TRUE:
    case POP_JUMP_BACKWARD_IF_FALSE:
    case POP_JUMP_BACKWARD_IF_TRUE: {
      Slot c = pop();
      int t = truth(c);
      Py_DECREF(c.value);
      if (t < 0)
        return nullptr;
      bool wantTrue = opcode == POP_JUMP_FORWARD_IF_TRUE ||
                      opcode == POP_JUMP_BACKWARD_IF_TRUE;
      bool backward = opcode == POP_JUMP_BACKWARD_IF_FALSE ||
                      opcode == POP_JUMP_BACKWARD_IF_TRUE;
      if (bool(t) == wantTrue)
        next = backward ? next - oparg : next + oparg;
      break;
    }
    case POP_JUMP_FORWARD_IF_NONE:
    case POP_JUMP_FORWARD_IF_NOT_NONE:
    case POP_JUMP_BACKWARD_IF_NONE:
    case POP_JUMP_BACKWARD_IF_NOT_NONE: {
      Slot c = pop();
      if (!c.source.empty())
        callTracker("on_guard_none", Py_BuildValue("(si)", c.source.c_str(),
                                                   c.value == Py_None));
      bool isNone = c.value == Py_None;
      Py_DECREF(c.value);
      bool wantNone = opcode == POP_JUMP_FORWARD_IF_NONE ||
                      opcode == POP_JUMP_BACKWARD_IF_NONE;
      bool backward = opcode == POP_JUMP_BACKWARD_IF_NONE ||
                      opcode == POP_JUMP_BACKWARD_IF_NOT_NONE;
      if (isNone == wantNone)
        next = backward ? next - oparg : next + oparg;
      break;
    }
    case JUMP_IF_FALSE_OR_POP:
    case JUMP_IF_TRUE_OR_POP: {
      int t = truth(stack.back());
      if (t < 0)
        return nullptr;
      if (bool(t) == (opcode == JUMP_IF_TRUE_OR_POP))
        next = pc + 1 + oparg;
      else
        Py_DECREF(pop().value);
      break;
    }
    case JUMP_FORWARD:
      next = next + oparg;
      break;
    case JUMP_BACKWARD:
    case JUMP_BACKWARD_NO_INTERRUPT:
      next = next - oparg;
      break;
    case GET_ITER: {
      Slot s = pop();
      {
        Passthrough p;
        r = PyObject_GetIter(s.value);
      }
      Py_DECREF(s.value);
      FAIL_IF_NULL(r);
      push(r, std::move(s.source));
      break;
    }
    case FOR_ITER: {
      Slot &it = stack.back();
      {
        Passthrough p;
        r = PyIter_Next(it.value);
      }
      if (r) {
        std::string src =
            it.source.empty()
                ? std::string()
                : it.source + "[" + std::to_string(it.iterIndex) + "]";
        ++it.iterIndex;
        noteTensor(r, src);
        push(r, std::move(src));
      } else {
        if (PyErr_Occurred())
          return nullptr;
        Py_DECREF(pop().value);
        next = next + oparg;
      }
      break;
    }
    case COPY: {
      Slot s = stack[stack.size() - oparg];
      Py_XINCREF(s.value);
      stack.push_back(std::move(s));
      break;
    }
    case SWAP:
      std::swap(stack.back(), stack[stack.size() - oparg]);
      break;
    case UNPACK_SEQUENCE: {
      Slot s = pop();
      PyObject *seq =
          PySequence_Fast(s.value, "cannot unpack non-iterable object");
      Py_DECREF(s.value);
      FAIL_IF_NULL(seq);
      if (PySequence_Fast_GET_SIZE(seq) != oparg) {
        PyErr_Format(PyExc_ValueError, "expected %d values to unpack, got %zd",
                     oparg, PySequence_Fast_GET_SIZE(seq));
        Py_DECREF(seq);
        return nullptr;
      }
      for (int i = oparg - 1; i >= 0; --i) {
        PyObject *v = PySequence_Fast_GET_ITEM(seq, i);
        Py_INCREF(v);
        PyObject *idx = PyLong_FromLong(i);
        push(v, itemSource(s.source, idx));
        Py_DECREF(idx);
      }
      Py_DECREF(seq);
      break;
    }
    case RAISE_VARARGS: {
      if (oparg == 1) {
        Slot e = pop();
        if (PyExceptionClass_Check(e.value)) {
          PyObject *inst = PyObject_CallNoArgs(e.value);
          if (inst) {
            PyErr_SetObject(e.value, inst);
            Py_DECREF(inst);
          }
        } else if (PyExceptionInstance_Check(e.value)) {
          PyErr_SetObject(reinterpret_cast<PyObject *>(Py_TYPE(e.value)),
                          e.value);
        } else {
          PyErr_SetString(PyExc_TypeError,
                          "exceptions must derive from BaseException");
        }
        Py_DECREF(e.value);
      } else {
        PyErr_SetString(
            PyExc_RuntimeError,
            "dynoc: this form of 'raise' is not supported by the evaluator");
      }
      return nullptr;
    }
    default:
      PyErr_Format(PyExc_SystemError, "dynoc: opcode %d reached the evaluator",
                   opcode);
      return nullptr;
    }
#undef FAIL_IF_NULL
    pc = next;
  }
  PyErr_SetString(PyExc_SystemError, "dynoc: fell off the end of the bytecode");
  return nullptr;
}

} // namespace
} // namespace dynoc::capture

using namespace dynoc::capture;

extern "C" int dynoc_evaluate_frame(const dynoc_frame_view *view,
                                    PyObject **result) {
  RegionState &st = regionState();
  if (!st.tracker || st.passthrough || st.pendingCode != view->code)
    return 0;
  std::vector<std::string> sources = std::move(st.pendingSources);
  st.pendingCode = nullptr;
  int bad;
  if (const char *why = unsupportedReason(view->code, bad)) {
    PyObject *args = Py_BuildValue(
        "(Osi)", reinterpret_cast<PyObject *>(view->code), why, bad);
    PyObject *m = PyObject_GetAttrString(st.tracker, "on_skip_frame");
    PyObject *r = m && args ? PyObject_Call(m, args, nullptr) : nullptr;
    Py_XDECREF(m), Py_XDECREF(args), Py_XDECREF(r);
    if (!r)
      PyErr_WriteUnraisable(st.tracker);
    return 0; // CPython runs it; its ATen calls are still recorded
  }
  Evaluator ev(*view, std::move(sources));
  *result = ev.run();
  return 1;
}
