//===- dispatcher.cpp - a compiled region's per-call dispatch in C --------===//
//
// Dispatcher(names, bound, G, variants, miss, stale, on_stale, binding=None)
//
//   names     L's keys, in slot order: the region function's positional
//             parameters, then its *args, keyword-only, **kwargs and free
//             variable names, as `binding` says it has them
//   bound     values of the first parameters (a module region's `self`)
//   G         the function's globals
//   variants  per variant, in order: None (the general path decides every
//             call from here on) or (ops, residual, run, direct):
//               ops       guard checks, each a tuple:
//                 ("attr", slot, name)       appends getattr(slots[slot], name)
//                 ("item", slot, key)        appends slots[slot][key]
//                 ("tensor", slot, dtype, device, requires_grad, size, stride)
//                 ("eq" | "is" | "is_not", slot, constant)
//                 ("len_eq", slot, n)        len(slots[slot]) == n
//                 ("call_eq", fn, constant)  fn() == constant
//                 ("no_hooks", slot, hook_ids, handle_type, removals)
//                                            hook_ids(slots[slot]) == ()
//               slots 0.. hold L's values in `names` order, then each
//               "attr" result;
//               residual  None, or the rest of the guards: residual(L, G)
//               run       None (the variant runs eagerly: the general path's)
//                         or the compiled variant: run(L, G)
//               direct    None, or (call, input slots): the compiled variant
//                         as call(*tensors) on those slots' values, which
//                         needs no L (used in place of run when there is
//                         no residual)
//   miss      returned whenever the general path must decide
//   stale     what run returns when its constants went stale; the call then
//             returns on_stale(variant index)
//   binding   None (every name a positional parameter, all given), or
//             (nparams, defaults, varargs, kwonly, varkw, cells): the number
//             of positional parameters, the defaults of the last ones, a
//             *args (a tuple of the arguments past nparams), the
//             keyword-only parameters' defaults, a **kwargs (an empty dict),
//             and the closure's cells (their values, read at each call)
//
// A guard that raises fails, as in the compiled Python check
// (_guards.compile_check); any failure only moves on to the next variant,
// and a variant that passes all its guards is valid for the call, so
// evaluating the guards in another order than their texts changes nothing.
//
//===----------------------------------------------------------------------===//
#include "dispatcher.h"

#include "attr_snapshot.h"
#include "evaluator_internal.h"
#include "guard_check.h"

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

namespace dynoc::capture {
namespace {

enum class OpKind { Attr, Item, Tensor, Eq, Is, IsNot, LenEq, CallEq, NoHooks };

/// One guard check. Borrowed references into `Op::args`, which owns them.
struct Op {
  OpKind kind;
  Py_ssize_t slot = 0;
  PyObject *args = nullptr; // the op's tuple, kept alive
  PyObject *a = nullptr, *b = nullptr, *c = nullptr, *d = nullptr, *e = nullptr;
  // tensor: the guard's sizes and strides (-1: a dynamic dim), read once.
  std::vector<long long> sizes, strides;
  bool dynamic = false;
  PyObject *deviceFlag = nullptr; // is_cpu / is_cuda, or null: compare .type
  // Reads or compares only attributes of a bound value (a module region's
  // `self`): covered by the variant's AttrSnapshot.
  bool isStatic = false;
  // no_hooks: the module and the hook generation of its last pass.
  PyObject *passedRef = nullptr; // a weak reference
  long long passedNextId = -1, passedRemovals = -1;
};

struct Variant {
  bool stop = false; // None: the general path decides from here on
  std::vector<Op> ops;
  PyObject *residual = nullptr;
  PyObject *run = nullptr;
  PyObject *direct = nullptr;     // call(*tensors)
  std::vector<Py_ssize_t> inputs; // the slots direct takes
  // Its static ops passed and nothing they read changed since: they are
  // skipped (no other op reads a slot they load).
  bool snapshotable = false;
  bool snapshotValid = false;
  std::unique_ptr<AttrSnapshot> snapshot;
};

struct DispatcherObject {
  PyObject_HEAD PyObject *names; // tuple of str
  PyObject *bound;               // tuple
  PyObject *globals;             // dict
  PyObject *variants;            // the constructor's list, kept for traversal
  PyObject *miss, *stale, *onStale;
  PyObject *binding; // None or the constructor's tuple, kept for traversal
  std::vector<Variant> *parsed;
  // binding's fields (borrowed from it)
  Py_ssize_t nparams;
  PyObject *defaults, *kwonly, *cells; // tuples
  bool varargs, varkw;
};

/// The sizes or strides of a tensor op as integers, -1 for None.
int parseDims(PyObject *seq, std::vector<long long> &out, bool &dynamic) {
  if (!PyTuple_Check(seq)) {
    PyErr_SetString(PyExc_TypeError,
                    "Dispatcher: sizes and strides are tuples");
    return -1;
  }
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(seq); ++i) {
    PyObject *item = PyTuple_GET_ITEM(seq, i);
    if (item == Py_None) {
      out.push_back(-1);
      dynamic = true;
      continue;
    }
    long long v = PyLong_AsLongLong(item);
    if (v == -1 && PyErr_Occurred())
      return -1;
    if (v < 0) {
      PyErr_SetString(PyExc_ValueError, "Dispatcher: a negative size");
      return -1;
    }
    out.push_back(v);
  }
  return 0;
}

/// ("tensor", slot, dtype, device, requires_grad, size, stride).
int parseTensorOp(Op &op) {
  static PyObject *isCpu = PyUnicode_InternFromString("is_cpu");
  static PyObject *isCuda = PyUnicode_InternFromString("is_cuda");
  if (!PyUnicode_Check(op.b) || !PyBool_Check(op.c)) {
    PyErr_SetString(PyExc_TypeError,
                    "Dispatcher: a tensor op's device is a str, requires_grad "
                    "a bool");
    return -1;
  }
  if (PyUnicode_CompareWithASCIIString(op.b, "cpu") == 0)
    op.deviceFlag = isCpu;
  else if (PyUnicode_CompareWithASCIIString(op.b, "cuda") == 0)
    op.deviceFlag = isCuda;
  bool ignored = false;
  if (parseDims(op.d, op.sizes, op.dynamic) < 0 ||
      parseDims(op.e, op.strides, ignored) < 0)
    return -1;
  if (op.sizes.size() != op.strides.size()) {
    PyErr_SetString(
        PyExc_ValueError,
        "Dispatcher: a tensor op's sizes and strides differ in rank");
    return -1;
  }
  return 0;
}

int parseOp(PyObject *tuple, Op &op) {
  if (!PyTuple_Check(tuple) || PyTuple_GET_SIZE(tuple) < 2 ||
      !PyUnicode_Check(PyTuple_GET_ITEM(tuple, 0))) {
    PyErr_SetString(PyExc_TypeError, "Dispatcher: an op is (kind, ...)");
    return -1;
  }
  std::string kind = PyUnicode_AsUTF8(PyTuple_GET_ITEM(tuple, 0));
  Py_ssize_t n = PyTuple_GET_SIZE(tuple);
  struct Shape {
    const char *name;
    OpKind kind;
    Py_ssize_t size;
    bool slotFirst;
  };
  static const Shape kShapes[] = {{"attr", OpKind::Attr, 3, true},
                                  {"item", OpKind::Item, 3, true},
                                  {"tensor", OpKind::Tensor, 7, true},
                                  {"eq", OpKind::Eq, 3, true},
                                  {"is", OpKind::Is, 3, true},
                                  {"is_not", OpKind::IsNot, 3, true},
                                  {"len_eq", OpKind::LenEq, 3, true},
                                  {"call_eq", OpKind::CallEq, 3, false},
                                  {"no_hooks", OpKind::NoHooks, 5, true}};
  for (const Shape &s : kShapes) {
    if (kind != s.name)
      continue;
    if (n != s.size) {
      PyErr_Format(PyExc_TypeError, "Dispatcher: op '%s' takes %zd items",
                   s.name, s.size);
      return -1;
    }
    op.kind = s.kind;
    Py_ssize_t first = 1;
    if (s.slotFirst) {
      op.slot = PyLong_AsSsize_t(PyTuple_GET_ITEM(tuple, 1));
      if (op.slot < 0) {
        if (!PyErr_Occurred())
          PyErr_SetString(PyExc_ValueError, "Dispatcher: negative slot");
        return -1;
      }
      first = 2;
    }
    PyObject **fields[] = {&op.a, &op.b, &op.c, &op.d, &op.e};
    for (Py_ssize_t i = first; i < n; ++i)
      *fields[i - first] = PyTuple_GET_ITEM(tuple, i);
    if (op.kind == OpKind::Attr && !PyUnicode_Check(op.a)) {
      PyErr_SetString(PyExc_TypeError, "Dispatcher: an attr name is a str");
      return -1;
    }
    if (op.kind == OpKind::Tensor && parseTensorOp(op) < 0)
      return -1;
    if (op.kind == OpKind::NoHooks && !PyList_Check(op.c)) {
      PyErr_SetString(PyExc_TypeError, "Dispatcher: removals is a list");
      return -1;
    }
    Py_INCREF(tuple);
    op.args = tuple;
    return 0;
  }
  PyErr_Format(PyExc_ValueError, "Dispatcher: unknown op '%s'", kind.c_str());
  return -1;
}

void clearVariants(std::vector<Variant> &variants) {
  for (Variant &v : variants) {
    for (Op &op : v.ops) {
      Py_CLEAR(op.args);
      Py_CLEAR(op.passedRef);
    }
    Py_CLEAR(v.residual);
    Py_CLEAR(v.run);
    Py_CLEAR(v.direct);
    v.snapshot.reset();
  }
  variants.clear();
}

/// The hook generation (_guards.hook_ids's cache key): torch's
/// RemovableHandle.next_id and dynoc's count of removals. False on an error.
bool hookGeneration(const Op &op, long long &nextId, long long &removals) {
  static PyObject *nextIdName = PyUnicode_InternFromString("next_id");
  PyObject *v = PyObject_GetAttr(op.b, nextIdName);
  if (!v)
    return false;
  nextId = PyLong_AsLongLong(v);
  Py_DECREF(v);
  if (PyList_GET_SIZE(op.c) < 1)
    return false;
  removals = PyLong_AsLongLong(PyList_GET_ITEM(op.c, 0));
  return !PyErr_Occurred();
}

/// hook_ids(module) == (), remembered for the module while no hook was
/// registered or removed anywhere: 1, 0, or -1 with an error.
int noHooks(Op &op, PyObject *module) {
  long long nextId, removals;
  if (!hookGeneration(op, nextId, removals))
    return -1;
  if (op.passedRef && nextId == op.passedNextId &&
      removals == op.passedRemovals) {
#if PY_VERSION_HEX >= 0x030D0000
    PyObject *passed = nullptr;
    if (PyWeakref_GetRef(op.passedRef, &passed) < 0)
      return -1;
    Py_XDECREF(passed); // only its identity is compared
#else
    PyObject *passed = PyWeakref_GetObject(op.passedRef);
#endif
    if (passed == module)
      return 1;
  }
  PyObject *ids = PyObject_CallOneArg(op.a, module);
  if (!ids)
    return -1;
  int none = PyTuple_Check(ids) && PyTuple_GET_SIZE(ids) == 0;
  Py_DECREF(ids);
  if (none) {
    Py_CLEAR(op.passedRef);
    op.passedRef = PyWeakref_NewRef(module, nullptr);
    if (!op.passedRef)
      PyErr_Clear(); // not weakly referenceable: no memory of the pass
    op.passedNextId = nextId;
    op.passedRemovals = removals;
  }
  return none;
}

/// 1 when the integers of `seq` (a tuple, as torch.Size and stride() are)
/// equal `want` (-1: any), 0 when not, -1 with an error.
int sameDims(PyObject *seq, const std::vector<long long> &want) {
  if (!PyTuple_Check(seq) || PyTuple_GET_SIZE(seq) != Py_ssize_t(want.size()))
    return 0;
  for (size_t i = 0; i < want.size(); ++i) {
    if (want[i] < 0)
      continue;
    long long v = PyLong_AsLongLong(PyTuple_GET_ITEM(seq, i));
    if (v == -1 && PyErr_Occurred())
      return -1;
    if (v != want[i])
      return 0;
  }
  return 1;
}

/// check_tensor with the guard's fields read once: dtype and requires_grad
/// compared by identity first (dtypes are singletons), the device by its
/// is_cpu / is_cuda flag. A guard with dynamic dims goes to the general
/// check, which also looks at the dims marked static.
int tensorOp(const Op &op, PyObject *t) {
  static PyObject *gradName = PyUnicode_InternFromString("requires_grad");
  if (op.dynamic || !op.deviceFlag)
    return checkTensorGuard(t, op.a, op.b, op.c, op.d, op.e);
  int same = tensorOfDtype(t, op.a);
  if (same != 1)
    return same;
  PyObject *v;
  PyObject *flags[] = {gradName, op.deviceFlag};
  PyObject *wants[] = {op.c, Py_True};
  for (int k = 0; k < 2; ++k) {
    if (!(v = PyObject_GetAttr(t, flags[k])))
      return -1;
    same = v == wants[k];
    Py_DECREF(v);
    if (!same)
      return 0;
  }
  if (!(v = tensorSizes(t)))
    return -1;
  same = sameDims(v, op.sizes);
  Py_DECREF(v);
  if (same != 1)
    return same;
  if (!(v = tensorStrides(t)))
    return -1;
  same = sameDims(v, op.strides);
  Py_DECREF(v);
  return same;
}

/// Runs `op` on `slots`: 1 passes, 0 fails, -1 with an error (which fails
/// the variant too).
int runOp(Op &op, std::vector<PyObject *> &slots, size_t &owned,
          AttrSnapshot *record) {
  if (op.kind == OpKind::CallEq) {
    PyObject *v = PyObject_CallNoArgs(op.a);
    if (!v)
      return -1;
    int r = v == op.b ? 1 : PyObject_RichCompareBool(v, op.b, Py_EQ);
    Py_DECREF(v);
    return r;
  }
  if (op.slot >= Py_ssize_t(slots.size())) {
    PyErr_SetString(PyExc_IndexError, "Dispatcher: slot out of range");
    return -1;
  }
  PyObject *v = slots[op.slot];
  if (!v) {
    PyErr_SetString(PyExc_RuntimeError, "Dispatcher: a skipped slot was read");
    return -1;
  }
  switch (op.kind) {
  case OpKind::Attr: {
    PyObject *loaded = record ? record->read(v, op.a) : attrLookup(v, op.a);
    if (!loaded)
      return -1;
    slots.push_back(loaded);
    ++owned;
    return 1;
  }
  case OpKind::Item: {
    PyObject *loaded = PyObject_GetItem(v, op.a);
    if (!loaded)
      return -1;
    slots.push_back(loaded);
    ++owned;
    return 1;
  }
  case OpKind::Tensor:
    return tensorOp(op, v);
  case OpKind::Eq:
    if (record)
      record->noteCompared(v);
    return v == op.a && !PyFloat_Check(v)
               ? 1
               : PyObject_RichCompareBool(v, op.a, Py_EQ);
  case OpKind::Is:
    return v == op.a;
  case OpKind::IsNot:
    return v != op.a;
  case OpKind::LenEq: {
    Py_ssize_t n = PyObject_Length(v), want = PyLong_AsSsize_t(op.a);
    if (n < 0 || (want == -1 && PyErr_Occurred()))
      return -1;
    return n == want;
  }
  case OpKind::NoHooks:
    return noHooks(op, v);
  case OpKind::CallEq:
    break;
  }
  return -1;
}

PyObject *buildLocals(DispatcherObject *self,
                      const std::vector<PyObject *> &slots) {
  PyObject *L = PyDict_New();
  if (!L)
    return nullptr;
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(self->names); ++i)
    if (PyDict_SetItem(L, PyTuple_GET_ITEM(self->names, i), slots[i]) < 0) {
      Py_DECREF(L);
      return nullptr;
    }
  return L;
}

/// New references the call's own slots hold (*args, **kwargs), released
/// when the call returns.
struct BaseSlots {
  std::vector<PyObject *> owned;
  ~BaseSlots() {
    for (PyObject *o : owned)
      Py_DECREF(o);
  }
};

/// L's values in slot order for positional `args` (after the bound ones), as
/// the function's parameters take them: 1, 0 when the call needs the general
/// path (too few or too many arguments, an empty cell), -1 on an error.
int bindSlots(DispatcherObject *self, PyObject *args,
              std::vector<PyObject *> &slots, BaseSlots &base) {
  // The call's positional values: the bound ones, then `args`.
  Py_ssize_t nbound = PyTuple_GET_SIZE(self->bound);
  Py_ssize_t nargs = PyTuple_GET_SIZE(args);
  Py_ssize_t given = nbound + nargs;
  auto value = [&](Py_ssize_t i) {
    return i < nbound ? PyTuple_GET_ITEM(self->bound, i)
                      : PyTuple_GET_ITEM(args, i - nbound);
  };
  Py_ssize_t ndefaults = self->defaults ? PyTuple_GET_SIZE(self->defaults) : 0;
  if (given < self->nparams - ndefaults ||
      (given > self->nparams && !self->varargs))
    return 0;
  Py_ssize_t positional = std::min(given, self->nparams);
  for (Py_ssize_t i = 0; i < positional; ++i)
    slots.push_back(value(i));
  for (Py_ssize_t p = positional; p < self->nparams; ++p)
    slots.push_back(
        PyTuple_GET_ITEM(self->defaults, p - (self->nparams - ndefaults)));
  if (self->varargs) {
    PyObject *rest = PyTuple_New(given - positional);
    if (!rest)
      return -1;
    for (Py_ssize_t i = positional; i < given; ++i)
      PyTuple_SET_ITEM(rest, i - positional, Py_NewRef(value(i)));
    base.owned.push_back(rest);
    slots.push_back(rest);
  }
  for (Py_ssize_t i = 0; self->kwonly && i < PyTuple_GET_SIZE(self->kwonly);
       ++i)
    slots.push_back(PyTuple_GET_ITEM(self->kwonly, i));
  if (self->varkw) {
    PyObject *none = PyDict_New();
    if (!none)
      return -1;
    base.owned.push_back(none);
    slots.push_back(none);
  }
  for (Py_ssize_t i = 0; self->cells && i < PyTuple_GET_SIZE(self->cells);
       ++i) {
    PyObject *value = PyCell_GET(PyTuple_GET_ITEM(self->cells, i));
    if (!value)
      return 0; // an empty cell: the general path leaves it out of L
    base.owned.push_back(Py_NewRef(value)); // the cell may be set meanwhile
    slots.push_back(value);
  }
  return 1;
}

PyObject *dispatcherCall(PyObject *obj, PyObject *args, PyObject *kwargs) {
  auto *self = reinterpret_cast<DispatcherObject *>(obj);
  Py_ssize_t nnames = PyTuple_GET_SIZE(self->names);
  std::vector<PyObject *> slots;
  slots.reserve(nnames + 8);
  BaseSlots base; // the *args tuple and **kwargs dict it made
  if (kwargs && PyDict_GET_SIZE(kwargs) > 0)
    return Py_NewRef(self->miss);
  switch (bindSlots(self, args, slots, base)) {
  case 0:
    return Py_NewRef(self->miss);
  case -1:
    return nullptr;
  }
  PyObject *L = nullptr;
  PyObject *result = nullptr;
  std::vector<Variant> &variants = *self->parsed;
  for (size_t i = 0; i < variants.size() && !result; ++i) {
    Variant &v = variants[i];
    if (v.stop)
      break;
    size_t owned = 0;
    int pass = 1;
    bool skipStatic = v.snapshotValid && v.snapshot->unchanged();
    // A fresh snapshot per recording call, installed only once complete: a
    // check that runs Python code lets another thread's call of this
    // dispatcher run meanwhile, and it must not see (or clear) a half one.
    std::unique_ptr<AttrSnapshot> recording;
    if (v.snapshotable && !skipStatic) {
      v.snapshotValid = false;
      recording = std::make_unique<AttrSnapshot>();
    }
    AttrSnapshot *record = recording.get();
    for (Op &op : v.ops) {
      if (op.isStatic && skipStatic) {
        if (op.kind == OpKind::Attr) { // keeps later slots' numbers
          slots.push_back(nullptr);
          ++owned;
        }
        continue;
      }
      if ((pass = runOp(op, slots, owned, op.isStatic ? record : nullptr)) != 1)
        break;
    }
    if (record && pass == 1 && record->cacheable()) {
      v.snapshot = std::move(recording);
      v.snapshotValid = true;
    }
    for (size_t k = 0; k < owned; ++k)
      Py_XDECREF(slots[nnames + k]);
    slots.resize(nnames);
    if (pass != 1) {
      PyErr_Clear();
      continue;
    }
    if (v.residual || (v.run && !v.direct)) {
      if (!L && !(L = buildLocals(self, slots)))
        return nullptr;
    }
    if (v.residual) {
      PyObject *argv[] = {L, self->globals};
      PyObject *ok = PyObject_Vectorcall(v.residual, argv, 2, nullptr);
      int truth = ok ? PyObject_IsTrue(ok) : -1;
      Py_XDECREF(ok);
      if (truth != 1) {
        PyErr_Clear();
        continue;
      }
    }
    if (!v.run)
      break; // runs eagerly: the general path's
    if (v.direct) {
      std::vector<PyObject *> tensors;
      tensors.reserve(v.inputs.size());
      for (Py_ssize_t k : v.inputs)
        tensors.push_back(slots[k]);
      result = PyObject_Vectorcall(v.direct, tensors.data(), tensors.size(),
                                   nullptr);
    } else {
      PyObject *argv[] = {L, self->globals};
      result = PyObject_Vectorcall(v.run, argv, 2, nullptr);
    }
    if (!result) { // the compiled code's own exception: the call's
      Py_XDECREF(L);
      return nullptr;
    }
    if (result == self->stale) {
      Py_DECREF(result);
      PyObject *index = PyLong_FromSize_t(i);
      result = index ? PyObject_CallOneArg(self->onStale, index) : nullptr;
      Py_XDECREF(index);
      Py_XDECREF(L);
      return result;
    }
  }
  Py_XDECREF(L);
  return result ? result : Py_NewRef(self->miss);
}

int dispatcherInit(PyObject *obj, PyObject *args, PyObject *kwargs) {
  auto *self = reinterpret_cast<DispatcherObject *>(obj);
  static const char *kwlist[] = {"names",    "bound",   "G",
                                 "variants", "miss",    "stale",
                                 "on_stale", "binding", nullptr};
  PyObject *names, *bound, *globals, *variants, *miss, *stale, *onStale,
      *binding = Py_None;
  if (!PyArg_ParseTupleAndKeywords(
          args, kwargs, "O!O!O!O!OOO|O", const_cast<char **>(kwlist),
          &PyTuple_Type, &names, &PyTuple_Type, &bound, &PyDict_Type, &globals,
          &PyList_Type, &variants, &miss, &stale, &onStale, &binding))
    return -1;
  Py_ssize_t nparams = PyTuple_GET_SIZE(names);
  PyObject *defaults = nullptr, *kwonly = nullptr, *cells = nullptr;
  int varargs = 0, varkw = 0;
  if (binding != Py_None) {
    if (!PyTuple_Check(binding) ||
        !PyArg_ParseTuple(binding, "nO!pO!pO!", &nparams, &PyTuple_Type,
                          &defaults, &varargs, &PyTuple_Type, &kwonly, &varkw,
                          &PyTuple_Type, &cells)) {
      if (!PyErr_Occurred())
        PyErr_SetString(PyExc_TypeError,
                        "Dispatcher: binding is (nparams, defaults, varargs, "
                        "kwonly, varkw, cells)");
      return -1;
    }
    Py_ssize_t described = nparams + varargs + PyTuple_GET_SIZE(kwonly) +
                           varkw + PyTuple_GET_SIZE(cells);
    if (described != PyTuple_GET_SIZE(names) ||
        PyTuple_GET_SIZE(defaults) > nparams ||
        (PyTuple_GET_SIZE(bound) > nparams && !varargs)) {
      PyErr_SetString(PyExc_ValueError,
                      "Dispatcher: the binding does not describe the names");
      return -1;
    }
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(cells); ++i)
      if (!PyCell_Check(PyTuple_GET_ITEM(cells, i))) {
        PyErr_SetString(PyExc_TypeError, "Dispatcher: cells are cells");
        return -1;
      }
  }
  if (PyTuple_GET_SIZE(bound) > PyTuple_GET_SIZE(names)) {
    PyErr_SetString(PyExc_ValueError,
                    "Dispatcher: more bound values than names");
    return -1;
  }
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(names); ++i)
    if (!PyUnicode_Check(PyTuple_GET_ITEM(names, i))) {
      PyErr_SetString(PyExc_TypeError, "Dispatcher: names are str");
      return -1;
    }
  std::vector<Variant> parsed;
  for (Py_ssize_t i = 0; i < PyList_GET_SIZE(variants); ++i) {
    PyObject *entry = PyList_GET_ITEM(variants, i);
    Variant v;
    if (entry == Py_None) {
      v.stop = true;
      parsed.push_back(std::move(v));
      continue;
    }
    PyObject *ops, *residual, *run, *direct;
    if (!PyTuple_Check(entry) || PyTuple_GET_SIZE(entry) != 4) {
      PyErr_SetString(
          PyExc_TypeError,
          "Dispatcher: a variant is (ops, residual, run, direct) or None");
      clearVariants(parsed);
      return -1;
    }
    if (!PyArg_ParseTuple(entry, "O!OOO", &PyList_Type, &ops, &residual, &run,
                          &direct)) {
      clearVariants(parsed);
      return -1;
    }
    parsed.push_back(std::move(v));
    Variant &added = parsed.back();
    // Which slots hold a bound value or an attribute read from one.
    std::vector<bool> staticSlot(PyTuple_GET_SIZE(names), false);
    for (Py_ssize_t k = 0; k < std::min(PyTuple_GET_SIZE(bound), nparams); ++k)
      staticSlot[k] = true; // (bound values past nparams are in *args)
    bool readsStaticLoads = false;
    for (Py_ssize_t k = 0; k < PyList_GET_SIZE(ops); ++k) {
      Op op;
      if (parseOp(PyList_GET_ITEM(ops, k), op) < 0) {
        clearVariants(parsed);
        return -1;
      }
      added.ops.push_back(op);
      Op &kept = added.ops.back();
      bool slotted = kept.kind != OpKind::CallEq;
      if (slotted && kept.slot >= Py_ssize_t(staticSlot.size())) {
        PyErr_SetString(PyExc_ValueError, "Dispatcher: slot out of range");
        clearVariants(parsed);
        return -1;
      }
      bool fromStatic = slotted && staticSlot[kept.slot];
      switch (kept.kind) {
      case OpKind::Attr:
        kept.isStatic = fromStatic;
        staticSlot.push_back(fromStatic);
        break;
      case OpKind::Item: // never skipped: a snapshot has no item reads
        readsStaticLoads |= fromStatic && kept.slot >= PyTuple_GET_SIZE(names);
        staticSlot.push_back(false);
        break;
      case OpKind::Eq:
      case OpKind::Is:
      case OpKind::IsNot:
        kept.isStatic = fromStatic;
        break;
      default:
        readsStaticLoads |= fromStatic && kept.slot >= PyTuple_GET_SIZE(names);
      }
      added.snapshotable |= kept.isStatic;
    }
    if (readsStaticLoads)
      added.snapshotable = false;
    if (residual != Py_None)
      added.residual = Py_NewRef(residual);
    if (run != Py_None)
      added.run = Py_NewRef(run);
    if (direct != Py_None) {
      PyObject *call, *inputs;
      if (!PyArg_ParseTuple(direct, "OO!", &call, &PyTuple_Type, &inputs)) {
        clearVariants(parsed);
        return -1;
      }
      for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(inputs); ++k) {
        Py_ssize_t slot = PyLong_AsSsize_t(PyTuple_GET_ITEM(inputs, k));
        if (slot < 0 || slot >= PyTuple_GET_SIZE(names)) {
          if (!PyErr_Occurred())
            PyErr_SetString(PyExc_ValueError,
                            "Dispatcher: a direct input is no parameter");
          clearVariants(parsed);
          return -1;
        }
        added.inputs.push_back(slot);
      }
      added.direct = Py_NewRef(call);
    }
  }
  Py_XSETREF(self->names, Py_NewRef(names));
  Py_XSETREF(self->bound, Py_NewRef(bound));
  Py_XSETREF(self->globals, Py_NewRef(globals));
  Py_XSETREF(self->variants, Py_NewRef(variants));
  Py_XSETREF(self->miss, Py_NewRef(miss));
  Py_XSETREF(self->stale, Py_NewRef(stale));
  Py_XSETREF(self->onStale, Py_NewRef(onStale));
  Py_XSETREF(self->binding, Py_NewRef(binding));
  self->nparams = nparams;
  self->defaults = defaults;
  self->kwonly = kwonly;
  self->cells = cells;
  self->varargs = varargs;
  self->varkw = varkw;
  if (!self->parsed)
    self->parsed = new std::vector<Variant>();
  clearVariants(*self->parsed);
  *self->parsed = std::move(parsed);
  return 0;
}

int dispatcherTraverse(PyObject *obj, visitproc visit, void *arg) {
  auto *self = reinterpret_cast<DispatcherObject *>(obj);
  Py_VISIT(Py_TYPE(obj));
  Py_VISIT(self->names);
  Py_VISIT(self->bound);
  Py_VISIT(self->globals);
  // The variants list holds every op tuple, residual and run the parsed
  // form references.
  Py_VISIT(self->variants);
  Py_VISIT(self->miss);
  Py_VISIT(self->stale);
  Py_VISIT(self->onStale);
  Py_VISIT(self->binding);
  if (self->parsed)
    for (const Variant &v : *self->parsed)
      if (v.snapshot)
        if (int r = v.snapshot->traverse(visit, arg))
          return r;
  return 0;
}

int dispatcherClear(PyObject *obj) {
  auto *self = reinterpret_cast<DispatcherObject *>(obj);
  if (self->parsed)
    clearVariants(*self->parsed);
  Py_CLEAR(self->names);
  Py_CLEAR(self->bound);
  Py_CLEAR(self->globals);
  Py_CLEAR(self->variants);
  Py_CLEAR(self->miss);
  Py_CLEAR(self->stale);
  Py_CLEAR(self->onStale);
  Py_CLEAR(self->binding);
  self->defaults = self->kwonly = self->cells = nullptr;
  return 0;
}

void dispatcherDealloc(PyObject *obj) {
  auto *self = reinterpret_cast<DispatcherObject *>(obj);
  PyTypeObject *tp = Py_TYPE(obj);
  PyObject_GC_UnTrack(obj);
  dispatcherClear(obj);
  delete self->parsed;
  self->parsed = nullptr;
  tp->tp_free(obj);
  Py_DECREF(tp);
}

PyType_Slot kSlots[] = {
    {Py_tp_doc,
     const_cast<char *>("Dispatcher(names, bound, G, variants, miss, stale, "
                        "on_stale): a compiled region's per-call dispatch.")},
    {Py_tp_init, reinterpret_cast<void *>(dispatcherInit)},
    {Py_tp_call, reinterpret_cast<void *>(dispatcherCall)},
    {Py_tp_traverse, reinterpret_cast<void *>(dispatcherTraverse)},
    {Py_tp_clear, reinterpret_cast<void *>(dispatcherClear)},
    {Py_tp_dealloc, reinterpret_cast<void *>(dispatcherDealloc)},
    {0, nullptr}};

PyType_Spec kSpec = {"_dynoc_C.Dispatcher", sizeof(DispatcherObject), 0,
                     Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC, kSlots};

} // namespace

int addDispatcherType(PyObject *module) {
  PyObject *type = PyType_FromSpec(&kSpec);
  if (!type)
    return -1;
  if (PyModule_AddObject(module, "Dispatcher", type) < 0) {
    Py_DECREF(type);
    return -1;
  }
  return 0;
}

} // namespace dynoc::capture
