//===- evaluator_support.cpp - the evaluator's helpers ------------------===//
#include "evaluator_internal.h"

#include <opcode.h>

namespace dynoc::capture {

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

std::string itemSource(const Slot &seq, Py_ssize_t i) {
  if (seq.items && i >= 0 && i < (Py_ssize_t)seq.items->size())
    return (*seq.items)[i];
  if (seq.source.empty())
    return {};
  return seq.source + "[" + std::to_string(i) + "]";
}

} // namespace dynoc::capture
