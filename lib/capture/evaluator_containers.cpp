//===- evaluator_containers.cpp - containers ------------------------------===//
//
// Building tuples, lists, sets, dicts, slices and strings, extending and
// merging them (a tuple built here keeps its items' sources), and
// unpacking, with CPython's iteration order and messages.
//
//===----------------------------------------------------------------------===//
#include "evaluator_internal.h"
#include "python_compat.h"

namespace dynoc::capture {

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

/// Opcodes for building and unpacking tuples, lists, sets, dicts and slices.
Evaluator::Step Evaluator::execContainers(Op op, int oparg) {
  PyObject *r = nullptr;
  switch (op) {
  case Op::BuildTuple:
  case Op::BuildList:
  case Op::BuildSet: {
    r = op == Op::BuildTuple  ? PyTuple_New(oparg)
        : op == Op::BuildList ? PyList_New(oparg)
                              : PySet_New(nullptr);
    STEP_FAIL_IF_NULL(r);
    auto items = std::make_shared<std::vector<std::string>>(oparg);
    bool anySource = false;
    int rc = 0;
    size_t base = stack.size() - oparg;
    for (int i = 0; i < oparg; ++i) {
      Slot &s = stack[base + i];
      anySource |= !s.source.empty();
      (*items)[i] = s.source;
      if (op == Op::BuildSet) {
        if (rc == 0)
          rc = PySet_Add(r, s.value);
        continue;
      }
      Py_INCREF(s.value);
      if (op == Op::BuildTuple)
        PyTuple_SET_ITEM(r, i, s.value);
      else
        PyList_SET_ITEM(r, i, s.value);
    }
    dropTop(oparg);
    if (rc < 0) {
      Py_DECREF(r);
      return Step::Error;
    }
    // Only tuples keep item shadows: a list may change behind them.
    push(r, {},
         op == Op::BuildTuple && anySource ? ItemSources(items)
                                           : ItemSources());
    break;
  }
  case Op::ListAppend:
  case Op::SetAdd: {
    Slot v = pop();
    PyObject *target = stack[stack.size() - oparg].value;
    int rc = op == Op::ListAppend ? PyList_Append(target, v.value)
                                  : PySet_Add(target, v.value);
    Py_DECREF(v.value);
    if (rc < 0)
      return Step::Error;
    break;
  }
  case Op::MapAdd: {
    Slot value = pop(), key = pop();
    int rc = PyDict_SetItem(stack[stack.size() - oparg].value, key.value,
                            value.value);
    Py_DECREF(value.value), Py_DECREF(key.value);
    if (rc < 0)
      return Step::Error;
    break;
  }
  case Op::ListExtend:
  case Op::SetUpdate:
  case Op::DictUpdate:
  case Op::DictMerge: {
    Slot v = pop();
    PyObject *target = stack[stack.size() - oparg].value;
    int rc;
    {
      // CPython's calls and messages for each (a ** with a repeated key
      // is an error, a later dict display key wins).
      Passthrough p;
      if (op == Op::ListExtend) {
        rc = listExtend(target, v.value);
        if (rc < 0 && PyErr_ExceptionMatches(PyExc_TypeError) &&
            !Py_TYPE(v.value)->tp_iter && !PySequence_Check(v.value)) {
          PyErr_Clear();
          PyErr_Format(PyExc_TypeError,
                       "Value after * must be an iterable, not %.200s",
                       Py_TYPE(v.value)->tp_name);
        }
      } else if (op == Op::SetUpdate) {
        rc = setUpdate(target, v.value);
      } else if (op == Op::DictUpdate) {
        rc = PyDict_Update(target, v.value);
        if (rc < 0 && PyErr_ExceptionMatches(PyExc_AttributeError)) {
          PyErr_Clear();
          PyErr_Format(PyExc_TypeError, "'%.200s' object is not a mapping",
                       Py_TYPE(v.value)->tp_name);
        }
      } else {
        rc = dictMergeKeywords(target, v.value);
        if (rc < 0)
          kwargsError(stack[stack.size() - 2 - oparg].value, v.value);
      }
    }
    if (op == Op::DictMerge && rc == 0)
      mergeKeywordSources(stack[stack.size() - oparg], v);
    Py_DECREF(v.value);
    if (rc < 0)
      return Step::Error;
    break;
  }
  case Op::ListToTuple: {
    Slot l = pop();
    r = PyList_AsTuple(l.value);
    Py_DECREF(l.value);
    STEP_FAIL_IF_NULL(r);
    push(r);
    break;
  }
  case Op::BuildMap: {
    r = PyDict_New();
    STEP_FAIL_IF_NULL(r);
    size_t base = stack.size() - 2 * oparg;
    int rc = 0;
    for (int i = 0; i < oparg && rc == 0; ++i)
      rc = PyDict_SetItem(r, stack[base + 2 * i].value,
                          stack[base + 2 * i + 1].value);
    dropTop(2 * oparg);
    if (rc < 0) {
      Py_DECREF(r);
      return Step::Error;
    }
    push(r);
    break;
  }
  case Op::BuildConstKeyMap: {
    Slot keys = pop();
    r = PyDict_New();
    STEP_FAIL_IF_NULL(r);
    size_t base = stack.size() - oparg;
    int rc = 0;
    for (int i = 0; i < oparg && rc == 0; ++i)
      rc = PyDict_SetItem(r, PyTuple_GET_ITEM(keys.value, i),
                          stack[base + i].value);
    dropTop(oparg);
    Py_DECREF(keys.value);
    if (rc < 0) {
      Py_DECREF(r);
      return Step::Error;
    }
    push(r);
    break;
  }
  case Op::BuildSlice: {
    Slot step = oparg == 3 ? pop() : Slot{};
    Slot stop = pop(), start = pop();
    // A bound that is a tensor size is handed to the recorder with the
    // slice: slicing a tensor passes it to the ATen call (a symbolic
    // bound); any other use pins it (capture/recorder.py).
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
    STEP_FAIL_IF_NULL(r);
    push(r);
    break;
  }
  case Op::GetLen: {
    // A match statement's sequence pattern: the length decides the case.
    const Slot &seq = stack.back();
    Py_ssize_t len = PyObject_Length(seq.value);
    if (len < 0)
      return Step::Error;
    std::string src = seq.source.empty() ? std::string()
                      : isTensor(seq.value)
                          ? tensorSource(seq.value, seq.source) + ".size()[0]"
                          : "len(" + seq.source + ")";
    push(PyLong_FromSsize_t(len), std::move(src));
    break;
  }
  case Op::UnpackSequence:
  case Op::UnpackEx: {
    int before = op == Op::UnpackSequence ? oparg : oparg & 0xFF;
    int after = op == Op::UnpackSequence ? 0 : oparg >> 8;
    bool star = op == Op::UnpackEx;
    Slot s = pop();
    PyObject *seq;
    {
      Passthrough p;
      seq = unpackToList(s.value, before, after, star);
    }
    Py_DECREF(s.value);
    STEP_FAIL_IF_NULL(seq);
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
        return Step::Error;
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
  default:
    return Step::Unhandled;
  }
  return Step::Done;
}

} // namespace dynoc::capture
