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
#include "exception_table.h"
#include "exceptions.h"
#include "frame_hook.h"
#include "size_sources.h"

#include <opcode.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

namespace dynoc::capture {

CellSources::~CellSources() {
  for (auto &[cell, src] : map)
    Py_DECREF(cell);
}

const std::string *CellSources::find(PyObject *cell) const {
  auto it = map.find(cell);
  return it == map.end() ? nullptr : &it->second;
}

void CellSources::set(PyObject *cell, std::string source) {
  if (source.empty()) { // nothing to name: the cell is not kept alive
    auto it = map.find(cell);
    if (it != map.end()) {
      map.erase(it);
      Py_DECREF(cell);
    }
    return;
  }
  auto [it, inserted] = map.try_emplace(cell);
  if (inserted)
    Py_INCREF(cell);
  it->second = std::move(source);
}

Runtime &runtime() {
  static Runtime r;
  return r;
}

RegionState &regionState() {
  static thread_local RegionState s;
  return s;
}

namespace {

using ItemSources = std::shared_ptr<const std::vector<std::string>>;

struct Slot {
  PyObject *value = nullptr; // owned; may be null (PUSH_NULL)
  std::string source;        // empty: unknown origin
  Py_ssize_t iterIndex = 0;  // for iterators: the next item's index
  ItemSources items;         // for tuples built here: each item's source
};

/// A scoped flag: calls made while it lives are not followed.
struct Passthrough {
  bool saved;
  Passthrough() : saved(regionState().passthrough) {
    regionState().passthrough = true;
  }
  ~Passthrough() { regionState().passthrough = saved; }
};

/// A scope in which dynoc's own Python (the tracker, the follow predicate)
/// runs: never seen by the program's trace or profile function, which is
/// shown the program's frames only, as in a plain run.
struct Untraced {
  bool paused = dynoc_tracing_active();
  Untraced() {
    if (paused)
      dynoc_pause_tracing();
  }
  ~Untraced() {
    if (paused)
      dynoc_resume_tracing();
  }
};

/// Opcodes the evaluator runs (a frame using any other runs natively).
bool isSupportedOpcode(int op) {
  // clang-format off
  switch (op) {
  case CACHE: case NOP: case RESUME: case PRECALL: case EXTENDED_ARG:
  case POP_TOP: case PUSH_NULL: case COPY: case SWAP:
  case LOAD_FAST: case STORE_FAST: case DELETE_FAST: case LOAD_CONST:
  case LOAD_GLOBAL: case STORE_GLOBAL: case DELETE_GLOBAL:
  case MAKE_CELL: case COPY_FREE_VARS: case LOAD_CLOSURE: case LOAD_DEREF:
  case STORE_DEREF: case DELETE_DEREF:
  case LOAD_ATTR: case LOAD_METHOD: case STORE_ATTR: case DELETE_ATTR:
  case KW_NAMES: case CALL: case CALL_FUNCTION_EX: case MAKE_FUNCTION:
  case BINARY_OP: case BINARY_SUBSCR: case STORE_SUBSCR: case DELETE_SUBSCR:
  case COMPARE_OP: case IS_OP: case CONTAINS_OP:
  case UNARY_NEGATIVE: case UNARY_POSITIVE: case UNARY_NOT: case UNARY_INVERT:
  case BUILD_TUPLE: case BUILD_LIST: case BUILD_SET: case BUILD_MAP:
  case BUILD_CONST_KEY_MAP: case BUILD_SLICE: case BUILD_STRING:
  case LIST_APPEND: case SET_ADD: case MAP_ADD: case LIST_EXTEND:
  case SET_UPDATE: case DICT_MERGE: case DICT_UPDATE: case LIST_TO_TUPLE:
  case FORMAT_VALUE: case GET_LEN: case UNPACK_SEQUENCE: case UNPACK_EX:
  case GET_ITER: case FOR_ITER: case RETURN_VALUE:
  case POP_JUMP_FORWARD_IF_FALSE: case POP_JUMP_FORWARD_IF_TRUE:
  case POP_JUMP_BACKWARD_IF_FALSE: case POP_JUMP_BACKWARD_IF_TRUE:
  case POP_JUMP_FORWARD_IF_NONE: case POP_JUMP_FORWARD_IF_NOT_NONE:
  case POP_JUMP_BACKWARD_IF_NONE: case POP_JUMP_BACKWARD_IF_NOT_NONE:
  case JUMP_IF_FALSE_OR_POP: case JUMP_IF_TRUE_OR_POP: case JUMP_FORWARD:
  case JUMP_BACKWARD: case JUMP_BACKWARD_NO_INTERRUPT:
  case RAISE_VARARGS: case RERAISE: case PUSH_EXC_INFO: case POP_EXCEPT:
  case CHECK_EXC_MATCH: case CHECK_EG_MATCH: case PREP_RERAISE_STAR:
  case LOAD_ASSERTION_ERROR: case BEFORE_WITH:
  case WITH_EXCEPT_START: case IMPORT_NAME: case IMPORT_FROM:
  case LOAD_NAME: case STORE_NAME: case DELETE_NAME: case LOAD_BUILD_CLASS:
  case SETUP_ANNOTATIONS: case PRINT_EXPR:
  case MATCH_MAPPING: case MATCH_SEQUENCE: case MATCH_KEYS: case MATCH_CLASS:
    return true;
  default:
    return false;
  }
  // clang-format on
}

/// Why `co` cannot run in the evaluator, or null. Sets the first opcode it
/// lacks.
const char *unsupportedReason(PyCodeObject *co, int &badOpcode) {
  badOpcode = -1;
  PyObject *code = PyCode_GetCode(co);
  if (!code)
    return "unreadable bytecode";
  const auto *instrs =
      reinterpret_cast<const uint8_t *>(PyBytes_AS_STRING(code));
  Py_ssize_t n = PyBytes_GET_SIZE(code) / 2;
  const char *reason = nullptr;
  for (Py_ssize_t i = 0; i < n;
       i += 1 + runtime().inlineCaches[instrs[2 * i]]) {
    if (!isSupportedOpcode(instrs[2 * i])) {
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

/// A new tuple of the call's argument values (positional and keyword).
PyObject *argsTuple(const std::vector<PyObject *> &args) {
  PyObject *t = PyTuple_New(args.size());
  for (size_t i = 0; t && i < args.size(); ++i) {
    Py_INCREF(args[i]);
    PyTuple_SET_ITEM(t, i, args[i]);
  }
  return t;
}

/// The code of the function a decorator wrapped (`__wrapped__`, as
/// functools.wraps sets it), else of `fn` itself; null for a builtin.
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

bool isGuardableScalar(PyObject *v) {
  return v == Py_None || PyBool_Check(v) || PyLong_Check(v) ||
         PyFloat_Check(v) || PyUnicode_Check(v);
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

/// The source of item `i` of a sequence: from the per-item shadows of a tuple
/// built in the evaluator, else by indexing the sequence's own source.
std::string itemSource(const Slot &seq, Py_ssize_t i) {
  if (seq.items && i >= 0 && i < (Py_ssize_t)seq.items->size())
    return (*seq.items)[i];
  if (seq.source.empty())
    return {};
  return seq.source + "[" + std::to_string(i) + "]";
}

/// DICT_MERGE's failure turned into CPython's TypeError naming the called
/// function: not a mapping, or a keyword argument given twice.
void kwargsError(PyObject *func, PyObject *kwargs) {
  if (PyErr_ExceptionMatches(PyExc_AttributeError)) {
    PyErr_Clear();
    if (PyObject *name = _PyObject_FunctionStr(func)) {
      PyErr_Format(PyExc_TypeError,
                   "%U argument after ** must be a mapping, not %.200s", name,
                   Py_TYPE(kwargs)->tp_name);
      Py_DECREF(name);
    }
  } else if (PyErr_ExceptionMatches(PyExc_KeyError)) {
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    if (value && PyTuple_Check(value) && PyTuple_GET_SIZE(value) == 1) {
      if (PyObject *name = _PyObject_FunctionStr(func)) {
        PyErr_Format(PyExc_TypeError,
                     "%U got multiple values for keyword argument '%S'", name,
                     PyTuple_GET_ITEM(value, 0));
        Py_DECREF(name);
      }
      Py_XDECREF(type), Py_XDECREF(value), Py_XDECREF(tb);
    } else {
      PyErr_Restore(type, value, tb);
    }
  }
}

/// `type(obj).name` bound to obj (a new reference), as CPython looks up
/// special methods: null with no error when the type lacks it.
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

/// The items UNPACK_SEQUENCE (`before` targets) or UNPACK_EX (`before`,
/// a starred one, `after`) takes from `v`, as a new list, by CPython's rules
/// and messages: a plain unpack reads one item past `before` (an endless
/// iterator is "too many values"), a starred one reads the rest.
PyObject *unpackToList(PyObject *v, int before, int after, bool star) {
  if (!star && (PyTuple_CheckExact(v) || PyList_CheckExact(v)) &&
      Py_SIZE(v) == before)
    return PySequence_List(v);
  PyObject *it = PyObject_GetIter(v);
  if (!it) {
    if (PyErr_ExceptionMatches(PyExc_TypeError) && !Py_TYPE(v)->tp_iter &&
        !PySequence_Check(v))
      PyErr_Format(PyExc_TypeError, "cannot unpack non-iterable %.200s object",
                   Py_TYPE(v)->tp_name);
    return nullptr;
  }
  PyObject *items = PyList_New(0);
  auto fail = [&]() -> PyObject * {
    Py_DECREF(it);
    Py_XDECREF(items);
    return nullptr;
  };
  if (!items)
    return fail();
  for (int i = 0; i < before; ++i) {
    PyObject *w = PyIter_Next(it);
    if (!w) {
      if (!PyErr_Occurred()) {
        if (star)
          PyErr_Format(PyExc_ValueError,
                       "not enough values to unpack (expected at least %d, "
                       "got %d)",
                       before + after, i);
        else
          PyErr_Format(PyExc_ValueError,
                       "not enough values to unpack (expected %d, got %d)",
                       before, i);
      }
      return fail();
    }
    int rc = PyList_Append(items, w);
    Py_DECREF(w);
    if (rc < 0)
      return fail();
  }
  if (!star) {
    PyObject *w = PyIter_Next(it);
    if (w) {
      Py_DECREF(w);
      PyErr_Format(PyExc_ValueError, "too many values to unpack (expected %d)",
                   before);
    }
    if (PyErr_Occurred())
      return fail();
    Py_DECREF(it);
    return items;
  }
  PyObject *rest = PySequence_List(it);
  if (!rest)
    return fail();
  Py_ssize_t n = PyList_GET_SIZE(rest);
  if (n < after) {
    Py_DECREF(rest);
    PyErr_Format(PyExc_ValueError,
                 "not enough values to unpack (expected at least %d, got %zd)",
                 before + after, before + n);
    return fail();
  }
  int rc = PyList_SetSlice(items, before, before, rest);
  Py_DECREF(rest);
  if (rc < 0)
    return fail();
  Py_DECREF(it);
  return items;
}

class Evaluator {
public:
  Evaluator(const dynoc_frame_view &f, PendingCall call)
      : f(f), co(f.code), call_(std::move(call)) {
    int n = co->co_nlocalsplus;
    locals.resize(n);
    for (int i = 0; i < n; ++i) {
      locals[i].value = f.localsplus[i];
      Py_XINCREF(locals[i].value);
    }
    bindArgumentSources();
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
  void bindArgumentSources();
  PyObject *runUntilError();
  bool unwindToHandler();

  void push(PyObject *v, std::string src = {}, ItemSources items = {}) {
    stack.push_back({v, std::move(src), 0, std::move(items)});
  }
  Slot pop() {
    Slot s = std::move(stack.back());
    stack.pop_back();
    return s;
  }
  void dropTop(size_t count) {
    for (size_t i = stack.size() - count; i < stack.size(); ++i)
      Py_XDECREF(stack[i].value);
    stack.resize(stack.size() - count);
  }
  int line() { return PyCode_Addr2Line(co, int(pc * 2)); }
  /// The frame CPython made for this call holds the same locals as the
  /// evaluator (written through at each store), so that what looks at it
  /// (locals(), sys._getframe(), a traceback's frame) sees what CPython's own
  /// loop would show, and a deleted local is freed when CPython frees it.
  void mirror(int i) {
    if (f.localsplus[i] != locals[i].value) {
      Py_XINCREF(locals[i].value);
      Py_XSETREF(f.localsplus[i], locals[i].value);
    }
  }
  /// Before code that may look at the frame runs: its current instruction.
  void publish() { dynoc_frame_publish_at(f.frame, int(pc)); }
  bool isTensor(PyObject *v) {
    return v && PyObject_TypeCheck(v, runtime().tensorType);
  }
  void noteTensor(PyObject *v, const std::string &src) {
    if (!src.empty() && isTensor(v))
      callTracker("on_tensor", Py_BuildValue("(Os)", v, src.c_str()));
  }
  /// A Python scalar with a known source that an operation consumes: the
  /// graph or the control flow depends on its value, so it is guarded.
  void guardScalar(const Slot &s) {
    if (!s.source.empty() && s.value && isGuardableScalar(s.value))
      callTracker("on_guard", Py_BuildValue("(sO)", s.source.c_str(), s.value));
  }
  /// guardScalar for an operand that is not itself a size (a size there is
  /// part of a size expression or guard instead).
  void guardUnlessSize(const Slot &s) {
    if (!isSizeInt(s.value, s.source))
      guardScalar(s);
  }
  /// The region writes what `source` names: a later read of it (or of
  /// what hangs off it) sees the region's own value, not one to guard.
  void noteStore(const std::string &source) {
    if (!source.empty())
      callTracker("on_store", Py_BuildValue("(s)", source.c_str()));
  }
  /// A match statement tests the subject's type: a subject with a source
  /// has its type guarded (tensors have tensor guards).
  void guardType(const Slot &s) {
    if (!s.source.empty() && s.value && !isTensor(s.value))
      callTracker("on_type_guard",
                  Py_BuildValue("(sO)", s.source.c_str(), s.value));
  }
  /// MATCH_KEYS: pushes the values of `keys` in the mapping `subject`, each
  /// with its item source, or None when one is missing (as CPython does,
  /// through the mapping's `get`). Whether each key is there is guarded.
  bool matchKeys(const Slot &subject, const Slot &keys) {
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
        callTracker(
            "on_key_guard",
            Py_BuildValue("(sOi)", subject.source.c_str(), key, int(present)));
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
  bool pushMatch(bool ok, bool matched, PyObject *tuple, ItemSources items) {
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
  bool matchClass(const Slot &subject, PyObject *cls, int nargs,
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
                       "%s() got multiple sub-patterns for attribute %R",
                       clsName, name);
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
  /// A tensor's source for its sizes: its own source, or for a tensor a
  /// graph of the region computed, the name of that graph value
  /// (`___v[12]`), whose sizes the recorder can express in the inputs'.
  /// Other tensors have none, and a decision on their sizes keeps the
  /// variant static.
  std::string tensorSource(PyObject *tensor, const std::string &source) {
    if (!source.empty())
      return source;
    PyObject *tracker = regionState().tracker;
    PyObject *r =
        tracker ? PyObject_CallMethod(tracker, "value_source", "O", tensor)
                : nullptr;
    std::string out = kUntracked;
    if (r && PyUnicode_Check(r))
      out = PyUnicode_AsUTF8(r);
    else if (!r && tracker)
      PyErr_WriteUnraisable(tracker);
    Py_XDECREF(r);
    return out;
  }
  static bool isBuiltinsModule(PyObject *m) {
    if (!m || !PyModule_Check(m))
      return false;
    const char *n = PyModule_GetName(m);
    if (!n)
      PyErr_Clear();
    return n && std::strcmp(n, "builtins") == 0;
  }
  static const char *cFunctionName(PyObject *f) {
    const char *n = reinterpret_cast<PyCFunctionObject *>(f)->m_ml->ml_name;
    return n ? n : "";
  }
  /// `t.shape` / `t.size()` as built here: a torch.Size with a size source.
  static bool isSizeTuple(const Slot &s) {
    return PyTuple_Check(s.value) && s.source.size() > 7 &&
           s.source.compare(s.source.size() - 7, 7, ".size()") == 0;
  }
  /// The source of `sizes[key]` for a torch.Size `sizes`: one dim, or for a
  /// slice, per-item sources in `items`.
  static std::string sizeItemSource(const Slot &sizes, PyObject *key,
                                    ItemSources &items) {
    std::string tensor = sizes.source.substr(0, sizes.source.size() - 7);
    Py_ssize_t rank = PyTuple_GET_SIZE(sizes.value);
    if (PyLong_CheckExact(key)) {
      long long d = PyLong_AsLongLong(key);
      return d >= -rank && d < rank ? sizeDimSource(tensor, d, rank)
                                    : std::string();
    }
    Py_ssize_t start, stop, step;
    if (PySlice_Check(key) && PySlice_Unpack(key, &start, &stop, &step) == 0) {
      PySlice_AdjustIndices(rank, &start, &stop, step);
      auto list = std::make_shared<std::vector<std::string>>();
      for (Py_ssize_t i = start; step > 0 ? i < stop : i > stop; i += step)
        list->push_back(sizeDimSource(tensor, i, rank));
      items = std::move(list);
    }
    PyErr_Clear();
    return {};
  }
  /// The source of a call's result when it reads sizes: `t.size()`,
  /// `t.size(d)`, `len(t)` (its first dim) and `t.numel()` (untracked).
  std::string sizeCallSource(PyObject *callable, const std::string &callableSrc,
                             const std::vector<PyObject *> &args,
                             const std::vector<std::string> &sources,
                             PyObject *kw, PyObject *result) {
    if (kw || !PyCFunction_Check(callable))
      return {};
    PyObject *self = PyCFunction_GET_SELF(callable);
    const char *name = cFunctionName(callable);
    if (PyLong_CheckExact(result) && args.size() == 1 && isTensor(args[0]) &&
        isBuiltinsModule(self) && std::strcmp(name, "len") == 0)
      return tensorSource(args[0], sources[0]) + ".size()[0]";
    if (!isTensor(self))
      return {};
    bool numel = std::strcmp(name, "numel") == 0;
    if (!numel && std::strcmp(name, "size") != 0)
      return {};
    // `L['x'].size` names its tensor; a method reached another way does not.
    std::string suffix = numel ? ".numel" : ".size";
    bool named = callableSrc.size() > suffix.size() &&
                 callableSrc.compare(callableSrc.size() - suffix.size(),
                                     suffix.size(), suffix) == 0;
    std::string tensor = tensorSource(
        self, named ? callableSrc.substr(0, callableSrc.size() - suffix.size())
                    : std::string());
    if (numel)
      return PyLong_CheckExact(result) && args.empty() ? tensor + ".numel()"
                                                       : std::string();
    if (args.empty() && PyTuple_Check(result))
      return tensor + ".size()";
    if (args.size() != 1 || !PyLong_CheckExact(args[0]) ||
        !PyLong_CheckExact(result))
      return {};
    PyObject *shape = PyObject_GetAttrString(self, "shape");
    if (!shape) {
      PyErr_Clear();
      return {};
    }
    Py_ssize_t rank = PyTuple_Check(shape) ? PyTuple_GET_SIZE(shape) : -1;
    Py_DECREF(shape);
    return rank < 0 ? std::string()
                    : sizeDimSource(tensor, PyLong_AsLongLong(args[0]), rank);
  }
  /// A builtin torch function or Tensor method: it maps to dispatcher calls
  /// directly, with no Python in between that could branch on its arguments.
  bool isAtenCallable(PyObject *callable) {
    if (!PyCFunction_Check(callable))
      return false;
    if (isTensor(PyCFunction_GET_SELF(callable)))
      return true;
    PyObject *mod = reinterpret_cast<PyCFunctionObject *>(callable)->m_module;
    return mod && PyUnicode_Check(mod) &&
           PyUnicode_CompareWithASCIIString(mod, "torch") == 0;
  }
  /// A graph break here; `escaping` is the tensor whose value Python reads
  /// (the graph so far outputs it). False, with the error set, when the
  /// region refuses to break (fullgraph=True): the breaking instruction must
  /// not run, so its side effects never happen.
  bool breakHere(const char *reason, bool escape,
                 PyObject *escaping = nullptr) {
    PyObject *tracker = regionState().tracker;
    if (!tracker)
      return true;
    PyObject *r = PyObject_CallMethod(tracker, "on_break", "sOiiO", reason,
                                      co->co_filename, line(), int(escape),
                                      escaping ? escaping : Py_None);
    Py_XDECREF(r);
    return r != nullptr;
  }
  PyObject *callTracker(const char *method, PyObject *args) {
    PyObject *r = callTrackerForResult(method, args);
    Py_XDECREF(r);
    return r;
  }
  /// As callTracker, returning the tracker's result (a new reference, or
  /// nullptr with the error reported as unraisable).
  PyObject *callTrackerForResult(const char *method, PyObject *args) {
    PyObject *tracker = regionState().tracker;
    if (!tracker || !args) {
      Py_XDECREF(args);
      return nullptr;
    }
    // A notification after a failed call: the program's exception is kept
    // out of the tracker's way and restored untouched.
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    Untraced untraced;
    PyObject *m = PyObject_GetAttrString(tracker, method);
    PyObject *r = m ? PyObject_Call(m, args, nullptr) : nullptr;
    Py_XDECREF(m);
    Py_DECREF(args);
    if (!r)
      PyErr_WriteUnraisable(tracker);
    if (type)
      PyErr_Restore(type, value, tb);
    return r;
  }
  /// Truth of a branch condition: a tensor here is a graph break; a Python
  /// value with a known source becomes a guard.
  int truth(const Slot &s);
  PyObject *call(int nargs);
  PyObject *callFunctionEx(bool hasKwargs);
  PyObject *invoke(PyObject *callable, const std::string &callableSrc,
                   std::vector<PyObject *> &args,
                   std::vector<std::string> &sources, PyObject *kw,
                   std::vector<std::string> varargSources = {});
  PyObject *invokeSpecial(PyObject *kind, PyObject *callable,
                          std::vector<PyObject *> &args, PyObject *kw);
  PyObject *callFollowed(PyObject *func, const std::string &funcSrc,
                         std::vector<PyObject *> &args,
                         std::vector<std::string> &sources, PyObject *kwnames,
                         std::vector<std::string> varargSources);
  PyObject *callNative(PyObject *callable, std::vector<PyObject *> &args,
                       PyObject *kw) {
    Passthrough p;
    Py_ssize_t nkw = kw ? PyTuple_GET_SIZE(kw) : 0;
    // f(*t) of a tuple, passed on unchanged: CPython hands a native callee
    // that very tuple (one with tp_call may return or keep it).
    if (!kw && spreadTuple &&
        Py_ssize_t(args.size()) == PyTuple_GET_SIZE(spreadTuple) &&
        std::equal(args.begin(), args.end(), &PyTuple_GET_ITEM(spreadTuple, 0)))
      return PyObject_Call(callable, spreadTuple, nullptr);
    return PyObject_Vectorcall(callable, args.data(), args.size() - nkw, kw);
  }
  /// The exact tuple a CALL_FUNCTION_EX without keywords spreads, while it
  /// runs (borrowed).
  PyObject *spreadTuple = nullptr;
  PyObject *zeroArgSuper();
  /// The source of the global `name` of this frame: `G['name']` in the
  /// region's own module, `___G('pkg.mod')['name']` in a module a followed
  /// call went to (guards evaluate in the region's globals).
  std::string globalSource(PyObject *name) {
    std::string key = std::string("['") + PyUnicode_AsUTF8(name) + "']";
    if (f.globals == regionState().rootGlobals)
      return "G" + key;
    PyObject *mod = PyDict_GetItemString(f.globals, "__name__");
    if (!mod || !PyUnicode_Check(mod))
      return {};
    return std::string("___G('") + PyUnicode_AsUTF8(mod) + "')" + key;
  }
  /// A global or builtin, as a new reference; null with NameError when
  /// neither has it.
  PyObject *lookupGlobal(PyObject *name, std::string &src) {
    if (!PyDict_CheckExact(f.globals) || !PyDict_CheckExact(f.builtins)) {
      // CPython's slow path: mappings' own lookup (a dict subclass's
      // __missing__ runs).
      PyObject *r = PyObject_GetItem(f.globals, name);
      if (r) {
        src = globalSource(name);
        return r;
      }
      if (!PyErr_ExceptionMatches(PyExc_KeyError))
        return nullptr;
      PyErr_Clear();
      r = PyObject_GetItem(f.builtins, name);
      if (!r && PyErr_ExceptionMatches(PyExc_KeyError)) {
        PyErr_Clear();
        raiseNameError("name '%U' is not defined", name);
      }
      return r;
    }
    PyObject *r = PyDict_GetItemWithError(f.globals, name);
    if (r)
      src = globalSource(name);
    else if (!PyErr_Occurred())
      r = PyDict_GetItemWithError(f.builtins, name);
    if (!r && !PyErr_Occurred())
      raiseNameError("name '%U' is not defined", name);
    Py_XINCREF(r);
    return r;
  }
  PyObject *makeFunction(int flags);
  int raise(int oparg);
  /// LOAD_DEREF/DELETE_DEREF of an empty cell: CPython's error for a cell
  /// of this frame (UnboundLocalError) or a free variable (NameError).
  void unboundDeref(int oparg) {
    constexpr char kFastFree = char(0x80); // CO_FAST_FREE
    PyObject *name = PyTuple_GET_ITEM(co->co_localsplusnames, oparg);
    if (PyBytes_AS_STRING(co->co_localspluskinds)[oparg] & kFastFree)
      raiseNameError("cannot access free variable '%U' where it is not "
                     "associated with a value in enclosing scope",
                     name);
    else
      PyErr_Format(PyExc_UnboundLocalError,
                   "cannot access local variable '%U' where it is not "
                   "associated with a value",
                   name);
  }

  const dynoc_frame_view &f;
  PyCodeObject *co;
  PendingCall call_;
  PyObject *code = nullptr;
  std::vector<Slot> locals, stack;
  PyObject *kwnames = nullptr; // borrowed from co_consts
  /// Tensor sizes inside tuple/list arguments of the call being made (set by
  /// call(), read by invoke()'s native path).
  std::vector<std::pair<PyObject *, std::string>> pendingItemSizes;
  template <class It> void noteItemSizes(It begin, It end) {
    pendingItemSizes.clear();
    for (It slot = begin; slot != end; ++slot) {
      PyObject *v = slot->value;
      if (!v || !(PyTuple_Check(v) || PyList_Check(v)))
        continue;
      for (Py_ssize_t k = 0; k < PySequence_Fast_GET_SIZE(v); ++k) {
        PyObject *item = PySequence_Fast_GET_ITEM(v, k);
        std::string src = itemSource(*slot, k);
        if (isSizeInt(item, src))
          pendingItemSizes.push_back({item, src});
      }
    }
  }
  std::string callSource; // the last CALL's result source (sizes)
  ItemSources callItems;  // and its items' (a followed call's tuple of sizes)
  void noteReturnedSizes(const Slot &s);
  bool takeReturnedSizes(PyObject *result, PyCodeObject *callee);
  Py_ssize_t pc = 0;
  Py_ssize_t lasti = -1;  // set by RERAISE: the offset an exception came from
  bool reraising = false; // RERAISE adds no traceback entry
};

void Evaluator::bindArgumentSources() {
  const std::vector<std::string> &src = call_.argSources;
  Py_ssize_t nkw = call_.kwnames ? PyTuple_GET_SIZE(call_.kwnames) : 0;
  Py_ssize_t npos = Py_ssize_t(src.size()) - nkw;
  if (npos < 0)
    return;
  int argc = co->co_argcount, kwonly = co->co_kwonlyargcount;
  for (Py_ssize_t i = 0; i < npos && i < argc; ++i)
    locals[i].source = src[i];
  if (call_.entry) // the region's own parameters, defaults included: L['p']
    for (int j = 0; j < argc + kwonly; ++j)
      if (j >= npos)
        locals[j].source =
            std::string("L['") +
            PyUnicode_AsUTF8(PyTuple_GET_ITEM(co->co_localsplusnames, j)) +
            "']";
  if ((co->co_flags & CO_VARARGS) && int(locals.size()) > argc + kwonly) {
    std::vector<std::string> extra(
        src.begin() + std::min<Py_ssize_t>(npos, argc), src.begin() + npos);
    extra.insert(extra.end(), call_.varargSources.begin(),
                 call_.varargSources.end());
    locals[argc + kwonly].items =
        std::make_shared<const std::vector<std::string>>(std::move(extra));
  }
  for (Py_ssize_t k = 0; k < nkw; ++k) {
    PyObject *name = PyTuple_GET_ITEM(call_.kwnames, k);
    for (int j = 0; j < argc + kwonly; ++j)
      if (PyUnicode_Compare(PyTuple_GET_ITEM(co->co_localsplusnames, j),
                            name) == 0) {
        locals[j].source = src[npos + k];
        break;
      }
  }
}

int Evaluator::truth(const Slot &s) {
  if (isTensor(s.value)) {
    if (!breakHere("a tensor's value decides Python control flow", true,
                   s.value))
      return -1;
  } else if (isSizeInt(s.value, s.source))
    callTracker(
        "on_size_guard",
        Py_BuildValue(
            "(s)", (s.source + (PyObject_IsTrue(s.value) ? " != 0" : " == 0"))
                       .c_str()));
  else
    guardScalar(s);
  Passthrough p;
  return PyObject_IsTrue(s.value);
}

PyObject *Evaluator::callFollowed(PyObject *func, const std::string &funcSrc,
                                  std::vector<PyObject *> &args,
                                  std::vector<std::string> &sources,
                                  PyObject *kw,
                                  std::vector<std::string> varargSources) {
  RegionState &st = regionState();
  st.pending.code = reinterpret_cast<PyCodeObject *>(PyFunction_GET_CODE(func));
  st.pending.argSources = sources;
  st.pending.kwnames = kw;
  st.pending.varargSources = std::move(varargSources);
  st.pending.funcSource = funcSrc;
  st.pending.entry = false;
  Py_ssize_t nkw = kw ? PyTuple_GET_SIZE(kw) : 0;
  st.returned = {};
  PyObject *r = PyObject_Vectorcall(func, args.data(), args.size() - nkw, kw);
  st.pending.code = nullptr;
  if (r)
    takeReturnedSizes(
        r, reinterpret_cast<PyCodeObject *>(PyFunction_GET_CODE(func)));
  st.returned = {};
  return r;
}

/// RETURN_VALUE of an evaluated function: hands the sizes in what it returns
/// (the value, or a tuple's items) to the call that followed it.
void Evaluator::noteReturnedSizes(const Slot &s) {
  RegionState &st = regionState();
  st.returned = {};
  if (call_.entry ||
      (co->co_flags & (CO_GENERATOR | CO_COROUTINE | CO_ASYNC_GENERATOR)))
    return;
  std::string source = isSizeInt(s.value, s.source) ? s.source : "";
  ItemSources items;
  if (s.items && s.value && PyTuple_Check(s.value) &&
      Py_ssize_t(s.items->size()) == PyTuple_GET_SIZE(s.value)) {
    std::vector<std::string> sizes(s.items->size());
    bool any = false;
    for (size_t i = 0; i < sizes.size(); ++i)
      if (isSizeInt(PyTuple_GET_ITEM(s.value, i), (*s.items)[i]))
        sizes[i] = (*s.items)[i], any = true;
    if (any)
      items = std::make_shared<const std::vector<std::string>>(sizes);
  }
  if (source.empty() && !items)
    return;
  st.returned = {co, s.value, std::move(source), std::move(items)};
}

/// After a followed call of `callee` that returned `result`: the sizes its
/// frame returned, for CALL to push with the result.
bool Evaluator::takeReturnedSizes(PyObject *result, PyCodeObject *callee) {
  RegionState::ReturnedSizes &ret = regionState().returned;
  if (ret.code != callee || ret.value != result)
    return false;
  callSource = std::move(ret.source);
  callItems = std::move(ret.items);
  return true;
}

/// `super()` inside an evaluated frame: CPython would read `__class__` and
/// the first argument from the frame, which the evaluator does not update.
PyObject *Evaluator::zeroArgSuper() {
  PyObject *cls = nullptr;
  for (int j = 0; j < co->co_nlocalsplus; ++j)
    if (PyUnicode_CompareWithASCIIString(
            PyTuple_GET_ITEM(co->co_localsplusnames, j), "__class__") == 0 &&
        locals[j].value && PyCell_Check(locals[j].value))
      cls = PyCell_GET(locals[j].value);
  PyObject *self = co->co_argcount > 0 ? locals[0].value : nullptr;
  if (self && PyCell_Check(self))
    self = PyCell_GET(self);
  if (!cls || !self) {
    PyErr_SetString(PyExc_RuntimeError, "super(): no arguments");
    return nullptr;
  }
  return PyObject_CallFunctionObjArgs(
      reinterpret_cast<PyObject *>(&PySuper_Type), cls, self, nullptr);
}

/// A call to one of the seed APIs' marked functions (dynoc/__init__.py).
PyObject *Evaluator::invokeSpecial(PyObject *kind, PyObject *callable,
                                   std::vector<PyObject *> &args,
                                   PyObject *kw) {
  const char *k = PyUnicode_AsUTF8(kind);
  std::string name = "<callable>";
  if (PyObject *qn = PyObject_GetAttrString(callable, "__qualname__")) {
    if (PyUnicode_Check(qn))
      name = PyUnicode_AsUTF8(qn);
    Py_DECREF(qn);
  } else {
    PyErr_Clear();
  }
  std::string k2 = k ? k : "";
  if (k2 == "graph_break") {
    if (!breakHere("graph_break() called", false))
      return nullptr;
    Py_RETURN_NONE;
  }
  if (k2 == "forbid") {
    // Dynamo's type and words, which scripts catch; dynoc adds the place.
    PyErr_Format(PyExc_AssertionError,
                 "Attempt to trace forbidden callable %R (inside a capture "
                 "region at %U:%d)",
                 callable, co->co_filename, line());
    return nullptr;
  }
  if (k2 == "allow")
    return callNative(callable, args, kw);
  if (k2 == "side_effect") {
    // print() and logging: a break; what they print runs unrecorded.
    std::string reason =
        "call to " + name + "(), a side effect outside the graph";
    if (!breakHere(reason.c_str(), false))
      return nullptr;
    callTracker("pause", Py_BuildValue("(N)", argsTuple(args)));
    PyObject *r = callNative(callable, args, kw);
    callTracker("resume", Py_BuildValue("(Os)", Py_None, ""));
    return r;
  }
  // disallow_in_graph / disable: a break; the call runs eagerly, unrecorded.
  // disable(recursive=False): the same for its own frame, and each function
  // it calls becomes a region of its own (the frame hook sees them).
  std::string reason = k2 == "disallow"
                           ? "call to '" + name + "', marked disallow_in_graph"
                           : "call to '" + name + "', disabled by disable()";
  if (!breakHere(reason.c_str(), false))
    return nullptr;
  callTracker("pause", Py_BuildValue("(N)", argsTuple(args)));
  RegionState &st = regionState();
  PyCodeObject *savedFrame = st.disabledFrame;
  bool savedInCallee = st.inCallee;
  if (k2 == "disable_frame") {
    st.disabledFrame = wrappedCode(callable);
    st.inCallee = false;
  }
  PyObject *r = callNative(callable, args, kw);
  st.disabledFrame = savedFrame;
  st.inCallee = savedInCallee;
  callTracker("resume", Py_BuildValue("(Os)", r ? r : Py_None,
                                      ("result of " + name + "()").c_str()));
  return r;
}

PyObject *Evaluator::invoke(PyObject *callable, const std::string &callableSrc,
                            std::vector<PyObject *> &args,
                            std::vector<std::string> &sources, PyObject *kw,
                            std::vector<std::string> varargSources) {
  Runtime &rt = runtime();
  publish();
  if (PyObject *kind = PyDict_GetItem(rt.specialCalls, callable))
    return invokeSpecial(kind, callable, args, kw);
  if (PyMethod_Check(callable))
    if (PyObject *kind =
            PyDict_GetItem(rt.specialCalls, PyMethod_GET_FUNCTION(callable)))
      return invokeSpecial(kind, callable, args, kw);
  // Tensor methods that hand a tensor's data to Python. item() goes through
  // the dispatcher (which would report it again); tolist() and numpy() not.
  if (PyCFunction_Check(callable) && isTensor(PyCFunction_GET_SELF(callable))) {
    const char *name =
        reinterpret_cast<PyCFunctionObject *>(callable)->m_ml->ml_name;
    std::string n = name ? name : "";
    if (n == "item" || n == "tolist" || n == "numpy") {
      std::string reason = "Tensor." + n + "() makes a Python value";
      if (!breakHere(reason.c_str(), n == "item",
                     PyCFunction_GET_SELF(callable)))
        return nullptr;
    }
  }
  if (callable == reinterpret_cast<PyObject *>(&PySuper_Type) && args.empty())
    return zeroArgSuper();
  // A compiled function called inside a region is inlined, as Dynamo does.
  if (PyObject_TypeCheck(callable,
                         reinterpret_cast<PyTypeObject *>(rt.regionType))) {
    PyObject *target = PyObject_GetAttrString(callable, "target");
    if (!target)
      return nullptr;
    PyObject *r = invoke(target, callableSrc, args, sources, kw,
                         std::move(varargSources));
    Py_DECREF(target);
    return r;
  }
  // nn.Module without hooks: follow its forward directly.
  if (PyObject_IsInstance(callable, rt.moduleType) == 1) {
    PyObject *fwd;
    {
      Untraced untraced;
      fwd = PyObject_CallOneArg(rt.forwardOf, callable);
    }
    if (!fwd)
      return nullptr;
    if (fwd != Py_None) {
      // What it runs depends on the hooks registered on it: guarded.
      if (!callableSrc.empty())
        callTracker("on_module_call",
                    Py_BuildValue("(sO)", callableSrc.c_str(), callable));
      args.insert(args.begin(), callable);
      sources.insert(sources.begin(), callableSrc);
      PyObject *r =
          callFollowed(fwd, "", args, sources, kw, std::move(varargSources));
      Py_DECREF(fwd);
      return r;
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
    return callFollowed(PyMethod_GET_FUNCTION(callable), "", args, sources, kw,
                        std::move(varargSources));
  }
  if (PyFunction_Check(callable) && shouldFollow(callable))
    return callFollowed(callable, callableSrc, args, sources, kw,
                        std::move(varargSources));
  // A library method run natively (an optimizer's step): what it records
  // may depend on its object's state, which the tracker guards. The tracker
  // may hand back a callable to run instead (dynoc's rule for that method,
  // e.g. an optimizer step with its learning rate and step count as tensors).
  if (PyMethod_Check(callable) &&
      PyFunction_Check(PyMethod_GET_FUNCTION(callable))) {
    auto dot = callableSrc.rfind('.');
    PyObject *rule = nullptr;
    if (dot != std::string::npos)
      rule = callTrackerForResult(
          "on_native_method",
          Py_BuildValue("(sOO)", callableSrc.substr(0, dot).c_str(),
                        PyMethod_GET_SELF(callable), callable));
    if (rule && rule != Py_None) {
      callTracker("enter_native", Py_BuildValue("([]i)", 1));
      PyObject *r = callNative(rule, args, kw);
      Py_DECREF(rule);
      PyObject *type, *value, *tb;
      PyErr_Fetch(&type, &value, &tb);
      callTracker("exit_native", PyTuple_New(0));
      PyErr_Restore(type, value, tb);
      return r;
    }
    Py_XDECREF(rule);
  }
  // A native call (torch op, builtin, library code): the Python scalars it
  // gets decide what it does. A size given to an ATen-backed torch function
  // lands in the graph's attributes, where a dynamic merge checks it.
  bool aten = isAtenCallable(callable);
  std::vector<std::pair<PyObject *, std::string>> sizes =
      std::move(pendingItemSizes);
  pendingItemSizes.clear();
  for (size_t i = 0; i < args.size(); ++i) {
    if (aten && isSizeInt(args[i], sources[i]))
      sizes.push_back({args[i], sources[i]});
    else if (!sources[i].empty() && isGuardableScalar(args[i]))
      callTracker("on_guard",
                  Py_BuildValue("(sO)", sources[i].c_str(), args[i]));
  }
  // Python code run natively (a torch.nn.functional wrapper, a module with
  // hooks) may read sizes where the evaluator does not see it.
  bool opaque = !PyCFunction_Check(callable) &&
                !Py_IS_TYPE(callable, &PyMethodDescr_Type);
  if (!opaque && (!aten || sizes.empty()))
    return callNative(callable, args, kw);
  // The ATen calls this makes may take these sizes as attributes: the
  // recorder notes where they came from, so that a graph can be made dynamic
  // from this one run (_dynamic.py).
  PyObject *list = PyList_New(0);
  for (auto &[value, source] : sizes)
    if (list) {
      PyObject *item = Py_BuildValue("(Os)", value, source.c_str());
      if (!item || PyList_Append(list, item) < 0)
        Py_CLEAR(list);
      Py_XDECREF(item);
    }
  if (!list)
    return nullptr;
  callTracker("enter_native", Py_BuildValue("(Ni)", list, int(opaque)));
  PyObject *r = callNative(callable, args, kw);
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  callTracker("exit_native", PyTuple_New(0));
  PyErr_Restore(type, value, tb);
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
  noteItemSizes(stack.begin() + base, stack.end());
  callSource.clear(), callItems.reset();
  PyObject *result = invoke(callable, callableSrc, args, sources, kw);
  if (result && callSource.empty() && !callItems)
    callSource =
        sizeCallSource(callable, callableSrc, args, sources, kw, result);
  dropTop(stack.size() - (base - 2));
  return result;
}

/// f(*args, **kwargs): the tuple's items keep their shadows where the tuple
/// was built here or came in as a *args parameter.
PyObject *Evaluator::callFunctionEx(bool hasKwargs) {
  Slot kwargs = hasKwargs ? pop() : Slot{};
  Slot callargs = pop();
  Slot func = pop();
  Slot null = pop();
  Py_XDECREF(null.value);
  PyObject *result = nullptr;
  PyObject *tuple = nullptr;
  if (!PyTuple_CheckExact(callargs.value) && !Py_TYPE(callargs.value)->tp_iter &&
      !PySequence_Check(callargs.value)) {
    if (PyObject *name = _PyObject_FunctionStr(func.value)) {
      PyErr_Format(PyExc_TypeError,
                   "%U argument after * must be an iterable, not %.200s", name,
                   Py_TYPE(callargs.value)->tp_name);
      Py_DECREF(name);
    }
  } else {
    tuple = PySequence_Tuple(callargs.value);
  }
  PyObject *kw = nullptr;
  std::vector<PyObject *> args;
  std::vector<std::string> sources;
  if (tuple) {
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(tuple); ++i) {
      args.push_back(PyTuple_GET_ITEM(tuple, i));
      sources.push_back(itemSource(callargs, i));
    }
    bool ok = true;
    if (kwargs.value && PyDict_Check(kwargs.value) &&
        PyDict_GET_SIZE(kwargs.value) > 0) {
      kw = PyTuple_New(PyDict_GET_SIZE(kwargs.value));
      Py_ssize_t pos = 0, k = 0;
      PyObject *key, *val;
      while (kw && PyDict_Next(kwargs.value, &pos, &key, &val)) {
        if (!PyUnicode_Check(key)) { // as CPython's vectorcall unpacking
          PyErr_SetString(PyExc_TypeError, "keywords must be strings");
          Py_CLEAR(kw);
          break;
        }
        Py_INCREF(key);
        PyTuple_SET_ITEM(kw, k++, key);
        args.push_back(val);
        sources.push_back(itemSource(kwargs.source, key));
      }
      ok = kw != nullptr;
    } else if (kwargs.value && !PyDict_Check(kwargs.value)) {
      PyErr_SetString(PyExc_TypeError, "argument after ** must be a mapping");
      ok = false;
    }
    if (ok) {
      PyObject *saved = spreadTuple;
      spreadTuple = kw || !PyTuple_CheckExact(callargs.value) ? nullptr
                                                              : callargs.value;
      result = invoke(func.value, func.source, args, sources, kw);
      spreadTuple = saved;
    }
  }
  Py_XDECREF(tuple);
  Py_XDECREF(kw);
  Py_XDECREF(kwargs.value);
  Py_DECREF(callargs.value);
  Py_DECREF(func.value);
  return result;
}

PyObject *Evaluator::makeFunction(int flags) {
  Slot codeObj = pop();
  Slot closure = (flags & 0x08) ? pop() : Slot{};
  Slot annotations = (flags & 0x04) ? pop() : Slot{};
  Slot kwdefaults = (flags & 0x02) ? pop() : Slot{};
  Slot defaults = (flags & 0x01) ? pop() : Slot{};
  PyObject *fn = PyFunction_New(codeObj.value, f.globals);
  int rc = fn ? 0 : -1;
  if (rc == 0 && closure.value)
    rc = PyFunction_SetClosure(fn, closure.value);
  // MAKE_FUNCTION gets annotations as a flat (name, value, ...) tuple, which
  // PyFunction_SetAnnotations refuses: CPython's own eval loop stores the tuple
  // and func.__annotations__ turns it into a dict on first read.
  if (rc == 0 && annotations.value)
    Py_XSETREF(reinterpret_cast<PyFunctionObject *>(fn)->func_annotations,
               Py_NewRef(annotations.value));
  if (rc == 0 && kwdefaults.value)
    rc = PyFunction_SetKwDefaults(fn, kwdefaults.value);
  if (rc == 0 && defaults.value)
    rc = PyFunction_SetDefaults(fn, defaults.value);
  for (Slot *s : {&codeObj, &closure, &annotations, &kwdefaults, &defaults})
    Py_XDECREF(s->value);
  if (rc < 0) {
    Py_XDECREF(fn);
    return nullptr;
  }
  return fn;
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

PyObject *Evaluator::run() {
  code = PyCode_GetCode(co);
  if (!code)
    return nullptr;
  // CPython's own loop counts each frame against the recursion limit; an
  // evaluated frame does too (and uses more C stack than CPython's).
  if (Py_EnterRecursiveCall(""))
    return nullptr;
  auto &frames = regionState().frames;
  frames.emplace_back(co, &pc);
  dynoc_frame_enter(f.frame);
  struct PopFrame {
    Evaluator &ev;
    ~PopFrame() {
      ev.publish(); // a frame object that outlives the call shows this
      dynoc_frame_leave(ev.f.frame);
      regionState().frames.pop_back();
      Py_LeaveRecursiveCall();
    }
  } popFrame{*this};
  for (;;) {
    PyObject *r = runUntilError();
    if (r)
      return r;
    if (!reraising) { // as CPython: one entry per frame an exception passes
      publish();
      dynoc_add_traceback(f.frame, int(pc));
    }
    reraising = false;
    if (!unwindToHandler())
      return nullptr;
  }
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

PyObject *Evaluator::runUntilError() {
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
    case LOAD_FAST:
    case LOAD_CLOSURE: {
      Slot &l = locals[oparg];
      if (!l.value) {
        PyErr_Format(PyExc_UnboundLocalError,
                     "cannot access local variable '%U' where it is not "
                     "associated with a value",
                     PyTuple_GetItem(co->co_localsplusnames, oparg));
        return nullptr;
      }
      Py_INCREF(l.value);
      push(l.value, l.source, l.items);
      break;
    }
    case STORE_FAST: {
      Slot s = pop();
      Py_XDECREF(locals[oparg].value);
      locals[oparg] = std::move(s);
      locals[oparg].iterIndex = 0;
      mirror(oparg);
      break;
    }
    case DELETE_FAST:
      Py_CLEAR(locals[oparg].value);
      locals[oparg].source.clear();
      locals[oparg].items.reset();
      mirror(oparg);
      break;
    case MAKE_CELL: {
      Slot &l = locals[oparg];
      PyObject *cell = PyCell_New(l.value);
      FAIL_IF_NULL(cell);
      if (!l.source.empty())
        regionState().cells->set(cell, l.source);
      Py_XDECREF(l.value);
      l.value = cell;
      l.source.clear();
      l.items.reset();
      mirror(oparg);
      break;
    }
    case COPY_FREE_VARS: {
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
    case LOAD_DEREF: {
      PyObject *cell = locals[oparg].value;
      PyObject *v = cell ? PyCell_GET(cell) : nullptr;
      if (!v) {
        unboundDeref(oparg);
        return nullptr;
      }
      Py_INCREF(v);
      const std::string *src = regionState().cells->find(cell);
      std::string s = src ? *src : std::string();
      noteTensor(v, s);
      push(v, std::move(s));
      break;
    }
    case STORE_DEREF: {
      Slot s = pop();
      PyObject *cell = locals[oparg].value;
      int rc = PyCell_Set(cell, s.value);
      Py_DECREF(s.value);
      if (rc < 0)
        return nullptr;
      regionState().cells->set(cell, std::move(s.source));
      break;
    }
    case DELETE_DEREF: {
      PyObject *cell = locals[oparg].value;
      if (!cell || !PyCell_GET(cell)) {
        unboundDeref(oparg);
        return nullptr;
      }
      PyCell_Set(cell, nullptr);
      break;
    }
    case LOAD_NAME: {
      // Module-level code (a whole-script region): names live in f_locals,
      // then globals, then builtins.
      PyObject *name = PyTuple_GET_ITEM(co->co_names, oparg);
      std::string src;
      if (f.locals) {
        r = PyObject_GetItem(f.locals, name); // new reference
        if (!r) {
          if (!PyErr_ExceptionMatches(PyExc_KeyError))
            return nullptr;
          PyErr_Clear();
        } else if (f.locals == f.globals) {
          src = globalSource(name);
        }
      }
      if (!r)
        FAIL_IF_NULL(r = lookupGlobal(name, src));
      noteTensor(r, src);
      push(r, std::move(src));
      break;
    }
    case STORE_NAME:
    case DELETE_NAME: {
      PyObject *name = PyTuple_GET_ITEM(co->co_names, oparg);
      if (!f.locals) {
        PyErr_Format(PyExc_SystemError, "no locals when storing %R", name);
        return nullptr;
      }
      int rc;
      if (opcode == STORE_NAME) {
        Slot v = pop();
        rc = PyObject_SetItem(f.locals, name, v.value);
        Py_DECREF(v.value);
      } else {
        rc = PyObject_DelItem(f.locals, name);
      }
      if (rc < 0)
        return nullptr;
      break;
    }
    case LOAD_BUILD_CLASS:
      r = PyDict_GetItemString(f.builtins, "__build_class__");
      if (!r) {
        PyErr_SetString(PyExc_NameError, "__build_class__ not found");
        return nullptr;
      }
      push(Py_NewRef(r));
      break;
    case SETUP_ANNOTATIONS:
      if (f.locals && !PyMapping_HasKeyString(f.locals, "__annotations__")) {
        PyObject *d = PyDict_New();
        int rc =
            d ? PyMapping_SetItemString(f.locals, "__annotations__", d) : -1;
        Py_XDECREF(d);
        if (rc < 0)
          return nullptr;
      }
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
      FAIL_IF_NULL(r = lookupGlobal(name, src));
      noteTensor(r, src);
      push(r, std::move(src));
      break;
    }
    case STORE_GLOBAL: {
      noteStore(globalSource(PyTuple_GET_ITEM(co->co_names, oparg)));
      Slot v = pop();
      int rc = PyDict_SetItem(f.globals, PyTuple_GET_ITEM(co->co_names, oparg),
                              v.value);
      Py_DECREF(v.value);
      if (rc < 0)
        return nullptr;
      break;
    }
    case DELETE_GLOBAL:
      noteStore(globalSource(PyTuple_GET_ITEM(co->co_names, oparg)));
      if (PyDict_DelItem(f.globals, PyTuple_GET_ITEM(co->co_names, oparg)) < 0)
        return nullptr;
      break;
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
      if (isTensor(owner.value) &&
          PyUnicode_CompareWithASCIIString(name, "shape") == 0)
        src = tensorSource(owner.value, owner.source) + ".size()";
      Py_DECREF(owner.value);
      FAIL_IF_NULL(r);
      noteTensor(r, src);
      if (opcode == LOAD_METHOD)
        push(nullptr);
      push(r, std::move(src));
      break;
    }
    case STORE_ATTR:
    case DELETE_ATTR: {
      PyObject *name = PyTuple_GET_ITEM(co->co_names, oparg);
      Slot owner = pop();
      Slot value = opcode == STORE_ATTR ? pop() : Slot{};
      if (!owner.source.empty())
        noteStore(owner.source + "." + PyUnicode_AsUTF8(name));
      int rc;
      {
        Passthrough p;
        rc = PyObject_SetAttr(owner.value, name, value.value);
      }
      Py_DECREF(owner.value);
      Py_XDECREF(value.value);
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
      push(r, std::move(callSource), std::move(callItems));
      callSource.clear(), callItems.reset();
      break;
    case CALL_FUNCTION_EX:
      callSource.clear(), callItems.reset();
      r = callFunctionEx(oparg & 1);
      FAIL_IF_NULL(r);
      push(r, std::move(callSource), std::move(callItems));
      callSource.clear(), callItems.reset();
      break;
    case MAKE_FUNCTION:
      r = makeFunction(oparg);
      FAIL_IF_NULL(r);
      push(r);
      break;
    case BINARY_OP: {
      Slot b = pop(), a = pop();
      std::string src =
          sizeArithmeticSource(oparg, a.value, a.source, b.value, b.source);
      if (src.empty())
        guardScalar(a), guardScalar(b);
      else // an affine expression of sizes; the other operand is pinned
        guardUnlessSize(a), guardUnlessSize(b);
      {
        Passthrough p;
        r = binaryOp(oparg, a.value, b.value);
      }
      Py_DECREF(a.value);
      Py_DECREF(b.value);
      FAIL_IF_NULL(r);
      push(r, std::move(src));
      break;
    }
    case BINARY_SUBSCR: {
      Slot key = pop(), container = pop();
      guardScalar(key);
      // Slicing a tensor with bounds that are sizes: the ATen calls it makes
      // take them (recorded with their sources, as a call's size arguments).
      bool sliced = isTensor(container.value) &&
                    (PySlice_Check(key.value) || PyTuple_Check(key.value));
      if (sliced)
        callTracker("enter_subscript", Py_BuildValue("(O)", key.value));
      {
        Passthrough p;
        r = PyObject_GetItem(container.value, key.value);
      }
      if (sliced)
        callTracker("exit_native", PyTuple_New(0));
      std::string src;
      ItemSources items;
      if (r && isSizeTuple(container)) {
        src = sizeItemSource(container, key.value, items);
      } else if (PyLong_Check(key.value) && container.items) {
        Py_ssize_t i = PyLong_AsSsize_t(key.value);
        if (i < 0)
          i += Py_ssize_t(container.items->size());
        src = itemSource(container, i);
      } else {
        src = itemSource(container.source, key.value);
      }
      Py_DECREF(container.value);
      Py_DECREF(key.value);
      FAIL_IF_NULL(r);
      noteTensor(r, src);
      push(r, std::move(src), std::move(items));
      break;
    }
    case STORE_SUBSCR: {
      Slot key = pop(), container = pop(), value = pop();
      noteStore(itemSource(container.source, key.value));
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
    case DELETE_SUBSCR: {
      Slot key = pop(), container = pop();
      int rc;
      {
        Passthrough p;
        rc = PyObject_DelItem(container.value, key.value);
      }
      Py_DECREF(key.value), Py_DECREF(container.value);
      if (rc < 0)
        return nullptr;
      break;
    }
    case COMPARE_OP: {
      Slot b = pop(), a = pop();
      bool sizes =
          (isSizeInt(a.value, a.source) || isSizeInt(b.value, b.source)) &&
          PyLong_CheckExact(a.value) && PyLong_CheckExact(b.value);
      if (sizes)
        guardUnlessSize(a), guardUnlessSize(b);
      else
        guardScalar(a), guardScalar(b);
      {
        Passthrough p;
        r = PyObject_RichCompare(a.value, b.value, oparg);
      }
      if (sizes && r)
        callTracker(
            "on_size_guard",
            Py_BuildValue("(s)", sizeCompareGuard(oparg, r == Py_True, a.value,
                                                  a.source, b.value, b.source)
                                     .c_str()));
      Py_DECREF(a.value), Py_DECREF(b.value);
      FAIL_IF_NULL(r);
      push(r);
      break;
    }
    case IS_OP: {
      Slot b = pop(), a = pop();
      r = ((a.value == b.value) ^ oparg) ? Py_True : Py_False;
      if (!a.source.empty() && (b.value == Py_None || a.value == Py_None))
        callTracker("on_guard_none", Py_BuildValue("(si)", a.source.c_str(),
                                                   a.value == Py_None));
      Py_INCREF(r);
      Py_DECREF(a.value), Py_DECREF(b.value);
      push(r);
      break;
    }
    case CONTAINS_OP: {
      Slot b = pop(), a = pop();
      guardScalar(a);
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
      guardScalar(a);
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
    case BUILD_LIST:
    case BUILD_SET: {
      r = opcode == BUILD_TUPLE  ? PyTuple_New(oparg)
          : opcode == BUILD_LIST ? PyList_New(oparg)
                                 : PySet_New(nullptr);
      FAIL_IF_NULL(r);
      auto items = std::make_shared<std::vector<std::string>>(oparg);
      bool anySource = false;
      int rc = 0;
      size_t base = stack.size() - oparg;
      for (int i = 0; i < oparg; ++i) {
        Slot &s = stack[base + i];
        anySource |= !s.source.empty();
        (*items)[i] = s.source;
        if (opcode == BUILD_SET) {
          if (rc == 0)
            rc = PySet_Add(r, s.value);
          continue;
        }
        Py_INCREF(s.value);
        if (opcode == BUILD_TUPLE)
          PyTuple_SET_ITEM(r, i, s.value);
        else
          PyList_SET_ITEM(r, i, s.value);
      }
      dropTop(oparg);
      if (rc < 0) {
        Py_DECREF(r);
        return nullptr;
      }
      // Only tuples keep item shadows: a list may change behind them.
      push(r, {},
           opcode == BUILD_TUPLE && anySource ? ItemSources(items)
                                              : ItemSources());
      break;
    }
    case LIST_APPEND:
    case SET_ADD: {
      Slot v = pop();
      PyObject *target = stack[stack.size() - oparg].value;
      int rc = opcode == LIST_APPEND ? PyList_Append(target, v.value)
                                     : PySet_Add(target, v.value);
      Py_DECREF(v.value);
      if (rc < 0)
        return nullptr;
      break;
    }
    case MAP_ADD: {
      Slot value = pop(), key = pop();
      int rc = PyDict_SetItem(stack[stack.size() - oparg].value, key.value,
                              value.value);
      Py_DECREF(value.value), Py_DECREF(key.value);
      if (rc < 0)
        return nullptr;
      break;
    }
    case LIST_EXTEND:
    case SET_UPDATE:
    case DICT_UPDATE:
    case DICT_MERGE: {
      Slot v = pop();
      PyObject *target = stack[stack.size() - oparg].value;
      int rc;
      {
        // CPython's calls and messages for each (a ** with a repeated key
        // is an error, a later dict display key wins).
        Passthrough p;
        if (opcode == LIST_EXTEND) {
          PyObject *res = _PyList_Extend(
              reinterpret_cast<PyListObject *>(target), v.value);
          rc = res ? 0 : -1;
          Py_XDECREF(res);
          if (!res && PyErr_ExceptionMatches(PyExc_TypeError) &&
              !Py_TYPE(v.value)->tp_iter && !PySequence_Check(v.value)) {
            PyErr_Clear();
            PyErr_Format(PyExc_TypeError,
                         "Value after * must be an iterable, not %.200s",
                         Py_TYPE(v.value)->tp_name);
          }
        } else if (opcode == SET_UPDATE) {
          rc = _PySet_Update(target, v.value);
        } else if (opcode == DICT_UPDATE) {
          rc = PyDict_Update(target, v.value);
          if (rc < 0 && PyErr_ExceptionMatches(PyExc_AttributeError)) {
            PyErr_Clear();
            PyErr_Format(PyExc_TypeError, "'%.200s' object is not a mapping",
                         Py_TYPE(v.value)->tp_name);
          }
        } else {
          rc = _PyDict_MergeEx(target, v.value, 2);
          if (rc < 0)
            kwargsError(stack[stack.size() - 2 - oparg].value, v.value);
        }
      }
      Py_DECREF(v.value);
      if (rc < 0)
        return nullptr;
      break;
    }
    case LIST_TO_TUPLE: {
      Slot l = pop();
      r = PyList_AsTuple(l.value);
      Py_DECREF(l.value);
      FAIL_IF_NULL(r);
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
      dropTop(2 * oparg);
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
      dropTop(oparg);
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
      // A bound that is a tensor size is handed to the recorder with the
      // slice: slicing a tensor passes it to the ATen call (a symbolic
      // bound); any other use pins it (_recorder.py).
      PyObject *sized = PyList_New(0);
      for (const Slot *b : {&start, &stop, &step}) {
        if (sized && isSizeInt(b->value, b->source)) {
          PyObject *pair = Py_BuildValue("(Os)", b->value, b->source.c_str());
          if (!pair || PyList_Append(sized, pair) < 0)
            Py_CLEAR(sized);
          Py_XDECREF(pair);
        } else {
          guardScalar(*b);
        }
      }
      r = PySlice_New(start.value, stop.value, step.value);
      Py_DECREF(start.value), Py_DECREF(stop.value), Py_XDECREF(step.value);
      if (r && sized && PyList_GET_SIZE(sized))
        callTracker("on_slice_sizes", Py_BuildValue("(OO)", r, sized));
      Py_XDECREF(sized);
      FAIL_IF_NULL(r);
      push(r);
      break;
    }
    case GET_LEN: {
      // A match statement's sequence pattern: the length decides the case.
      const Slot &seq = stack.back();
      Py_ssize_t len = PyObject_Length(seq.value);
      if (len < 0)
        return nullptr;
      std::string src = seq.source.empty() ? std::string()
                        : isTensor(seq.value)
                            ? tensorSource(seq.value, seq.source) + ".size()[0]"
                            : "len(" + seq.source + ")";
      push(PyLong_FromSsize_t(len), std::move(src));
      break;
    }
    case MATCH_MAPPING:
    case MATCH_SEQUENCE: {
      const Slot &subject = stack.back();
      guardType(subject);
      unsigned long flag =
          opcode == MATCH_MAPPING ? Py_TPFLAGS_MAPPING : Py_TPFLAGS_SEQUENCE;
      push(PyBool_FromLong(Py_TYPE(subject.value)->tp_flags & flag));
      break;
    }
    case MATCH_KEYS:
      if (!matchKeys(stack[stack.size() - 2], stack.back()))
        return nullptr;
      break;
    case MATCH_CLASS: {
      Slot names = pop(), cls = pop(), subject = pop();
      guardType(subject);
      bool ok = matchClass(subject, cls.value, oparg, names.value);
      Py_DECREF(names.value), Py_DECREF(cls.value), Py_DECREF(subject.value);
      if (!ok)
        return nullptr;
      break;
    }
    case RETURN_VALUE: {
      Slot s = pop();
      noteReturnedSizes(s);
      return s.value;
    }
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
      push(r, std::move(s.source), std::move(s.items));
      break;
    }
    case FOR_ITER: {
      Slot &it = stack.back();
      {
        Passthrough p;
        r = PyIter_Next(it.value);
      }
      if (r) {
        std::string src = itemSource(it, it.iterIndex);
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
    case UNPACK_SEQUENCE:
    case UNPACK_EX: {
      int before = opcode == UNPACK_SEQUENCE ? oparg : oparg & 0xFF;
      int after = opcode == UNPACK_SEQUENCE ? 0 : oparg >> 8;
      bool star = opcode == UNPACK_EX;
      Slot s = pop();
      PyObject *seq;
      {
        Passthrough p;
        seq = unpackToList(s.value, before, after, star);
      }
      Py_DECREF(s.value);
      FAIL_IF_NULL(seq);
      Py_ssize_t len = PyList_GET_SIZE(seq);
      for (Py_ssize_t i = len - 1; i >= len - after; --i) {
        PyObject *v = PyList_GET_ITEM(seq, i);
        Py_INCREF(v);
        push(v, itemSource(s, i));
      }
      if (star) {
        PyObject *rest = PyList_GetSlice(seq, before, len - after);
        if (!rest) {
          Py_DECREF(seq);
          return nullptr;
        }
        push(rest);
      }
      for (int i = before - 1; i >= 0; --i) {
        PyObject *v = PyList_GET_ITEM(seq, i);
        Py_INCREF(v);
        std::string src = itemSource(s, i);
        noteTensor(v, src);
        push(v, std::move(src));
      }
      Py_DECREF(seq);
      break;
    }
    case RAISE_VARARGS:
      if (raise(oparg) == 1)
        reraising = true;
      return nullptr;
    case RERAISE: {
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
      return nullptr;
    }
    case PUSH_EXC_INFO: {
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
    case POP_EXCEPT: {
      Slot prev = pop();
      if (prev.value == Py_None) {
        Py_DECREF(prev.value);
        PyErr_SetExcInfo(nullptr, nullptr, nullptr);
      } else {
        PyErr_SetExcInfo(nullptr, prev.value, nullptr);
      }
      break;
    }
    case CHECK_EXC_MATCH: {
      Slot right = pop();
      if (!validExceptType(right.value)) {
        Py_DECREF(right.value);
        return nullptr;
      }
      int match = PyErr_GivenExceptionMatches(stack.back().value, right.value);
      Py_DECREF(right.value);
      push(Py_NewRef(match ? Py_True : Py_False));
      break;
    }
    case CHECK_EG_MATCH: { // except*: [exc] -> [rest, match] or [exc, None]
      Slot type = pop();
      PyObject *match = nullptr, *rest = nullptr;
      bool ok = validExceptStarType(type.value) &&
                matchExceptionGroup(stack.back().value, type.value, match,
                                    rest);
      Py_DECREF(type.value);
      if (!ok)
        return nullptr;
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
    case PREP_RERAISE_STAR: {
      Slot excs = pop(), orig = pop();
      r = prepReraiseStar(orig.value, excs.value);
      Py_DECREF(excs.value), Py_DECREF(orig.value);
      FAIL_IF_NULL(r);
      push(r);
      break;
    }
    case LOAD_ASSERTION_ERROR:
      push(Py_NewRef(PyExc_AssertionError));
      break;
    case PRINT_EXPR: { // interactive code ("single" mode): sys.displayhook
      Slot v = pop();
      PyObject *hook = PySys_GetObject("displayhook"); // borrowed
      if (!hook) {
        PyErr_SetString(PyExc_RuntimeError, "lost sys.displayhook");
        Py_DECREF(v.value);
        return nullptr;
      }
      Py_INCREF(hook);
      // A call like any other: the default hook prints, a side effect.
      std::vector<PyObject *> args{v.value};
      std::vector<std::string> sources{v.source};
      PyObject *res = invoke(hook, "", args, sources, nullptr);
      Py_DECREF(hook);
      Py_DECREF(v.value);
      FAIL_IF_NULL(res);
      Py_DECREF(res);
      break;
    }
    case BEFORE_WITH: {
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
        return nullptr;
      }
      push(exit);
      push(res);
      break;
    }
    case WITH_EXCEPT_START: {
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
      FAIL_IF_NULL(r);
      push(r);
      break;
    }
    case IMPORT_NAME: {
      Slot fromlist = pop(), level = pop();
      {
        Passthrough p;
        r = PyImport_ImportModuleLevelObject(
            PyTuple_GET_ITEM(co->co_names, oparg), f.globals, Py_None,
            fromlist.value, PyLong_AsLong(level.value));
      }
      Py_DECREF(fromlist.value), Py_DECREF(level.value);
      FAIL_IF_NULL(r);
      push(r);
      break;
    }
    case IMPORT_FROM: {
      PyObject *name = PyTuple_GET_ITEM(co->co_names, oparg);
      {
        Passthrough p;
        r = PyObject_GetAttr(stack.back().value, name);
      }
      FAIL_IF_NULL(r);
      push(r);
      break;
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

namespace {

/// Is this frame a call of the `--entry` function?
bool isEntry(const dynoc_frame_view &view) {
  Runtime &rt = runtime();
  if (PyUnicode_CompareWithASCIIString(view.code->co_name,
                                       rt.entryName.c_str()) != 0)
    return false;
  PyObject *mod = PyDict_GetItemString(view.globals, "__name__");
  if (!mod || !PyUnicode_Check(mod))
    return false;
  for (const std::string &m : rt.entryModules)
    if (PyUnicode_CompareWithASCIIString(mod, m.c_str()) == 0)
      return true;
  return false;
}

/// Hands a call of the entry function (or of a function a
/// disable(recursive=False) one calls), with its bound arguments rebuilt as
/// (args, kwargs), to `callback` on the Python side, which runs it as a
/// region call; `busy` is set meanwhile, so that the call is not handed over
/// again.
int runAsRegion(const dynoc_frame_view &view, PyObject **result,
                PyObject *callback, bool RegionState::*busy) {
  PyCodeObject *co = view.code;
  int argc = co->co_argcount, kwonly = co->co_kwonlyargcount;
  PyObject **lp = view.localsplus;
  PyObject *args = PyList_New(0), *kwargs = PyDict_New();
  bool ok = args && kwargs;
  for (int i = 0; ok && i < argc; ++i)
    ok = lp[i] && PyList_Append(args, lp[i]) == 0;
  int next = argc + kwonly;
  if (ok && (co->co_flags & CO_VARARGS)) {
    PyObject *rest = lp[next++];
    Py_ssize_t n = PyList_GET_SIZE(args);
    ok = rest && PyList_SetSlice(args, n, n, rest) == 0;
  }
  for (int i = argc; ok && i < argc + kwonly; ++i)
    ok = lp[i] &&
         PyDict_SetItem(kwargs, PyTuple_GET_ITEM(co->co_localsplusnames, i),
                        lp[i]) == 0;
  if (ok && (co->co_flags & CO_VARKEYWORDS) && lp[next])
    ok = PyDict_Update(kwargs, lp[next]) == 0;
  PyObject *argTuple = ok ? PyList_AsTuple(args) : nullptr;
  Py_XDECREF(args);
  if (!argTuple) {
    Py_XDECREF(kwargs);
    if (!PyErr_Occurred())
      PyErr_SetString(PyExc_SystemError, "dynoc: unbound entry arguments");
    *result = nullptr;
    return 1;
  }
  RegionState &st = regionState();
  st.*busy = true;
  *result = PyObject_CallFunctionObjArgs(callback, view.func, argTuple, kwargs,
                                         nullptr);
  regionState().*busy = false;
  Py_DECREF(argTuple);
  Py_DECREF(kwargs);
  return 1;
}

} // namespace

extern "C" int dynoc_evaluate_frame(const dynoc_frame_view *view,
                                    PyObject **result) {
  RegionState &st = regionState();
  Runtime &rt = runtime();
  if (!st.tracker && rt.entryCallback && !st.inEntry && isEntry(*view))
    return runAsRegion(*view, result, rt.entryCallback, &RegionState::inEntry);
  constexpr int kResumable = CO_GENERATOR | CO_COROUTINE | CO_ASYNC_GENERATOR;
  if (st.tracker && st.disabledFrame && !st.inCallee &&
      view->code != st.disabledFrame && rt.calleeCallback && !view->locals &&
      view->func && PyFunction_Check(view->func) &&
      !(view->code->co_flags & kResumable)) {
    st.inCallee = true; // the follow predicate is Python code too
    bool follow = shouldFollow(view->func);
    st.inCallee = false;
    if (follow)
      return runAsRegion(*view, result, rt.calleeCallback,
                         &RegionState::inCallee);
  }
  if (!st.tracker || st.passthrough || st.pending.code != view->code)
    return 0;
  PendingCall call = std::move(st.pending);
  st.pending = PendingCall{};
  int bad = -1;
  const char *why = dynoc_tracing_active()
                        ? "a trace or profile function is set"
                        : unsupportedReason(view->code, bad);
  if (why) {
    PyObject *args = Py_BuildValue(
        "(Osi)", reinterpret_cast<PyObject *>(view->code), why, bad);
    Untraced untraced;
    PyObject *m = PyObject_GetAttrString(st.tracker, "on_skip_frame");
    PyObject *r = m && args ? PyObject_Call(m, args, nullptr) : nullptr;
    Py_XDECREF(m), Py_XDECREF(args), Py_XDECREF(r);
    if (!r) { // the region refuses the break (fullgraph=True)
      *result = nullptr;
      return 1;
    }
    return 0; // CPython runs it; its ATen calls are still recorded
  }
  Evaluator ev(*view, std::move(call));
  *result = ev.run();
  return 1;
}
