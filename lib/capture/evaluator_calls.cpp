//===- evaluator_calls.cpp - calls ----------------------------------------===//
//
// CALL, CALL_FUNCTION_EX, KW_NAMES and MAKE_FUNCTION: which calls are
// followed into the evaluator (user code, module forwards), which run
// natively (their ATen calls recorded at the dispatcher), and the seed
// APIs' marked functions (graph_break, disable, print as a side effect).
//
//===----------------------------------------------------------------------===//
#include "evaluator_internal.h"

namespace dynoc::capture {

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
  int varkw = argc + kwonly + bool(co->co_flags & CO_VARARGS);
  bool hasVarkw = (co->co_flags & CO_VARKEYWORDS) && int(locals.size()) > varkw &&
                  locals[varkw].value && PyDict_CheckExact(locals[varkw].value);
  KeywordSources rest{hasVarkw ? dictVersion(locals[varkw].value) : 0, {}};
  for (Py_ssize_t k = 0; k < nkw; ++k) {
    PyObject *name = PyTuple_GET_ITEM(call_.kwnames, k);
    int j = 0;
    for (; j < argc + kwonly; ++j)
      if (PyUnicode_Compare(PyTuple_GET_ITEM(co->co_localsplusnames, j),
                            name) == 0) {
        locals[j].source = src[npos + k];
        break;
      }
    if (j == argc + kwonly && hasVarkw && !src[npos + k].empty())
      rest.sources.emplace_back(PyUnicode_AsUTF8(name), src[npos + k]);
  }
  if (!rest.sources.empty())
    locals[varkw].keywords =
        std::make_shared<const KeywordSources>(std::move(rest));
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
  if (k2 == "compiling") // torch.compiler.is_compiling(): a region traces
    Py_RETURN_TRUE;
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

/// Does `callable` carry torch's `_dynamo_forbidden` mark (set_stance, its
/// decorated functions and the like), looked up as inspect.getattr_static
/// does: the function's own dict, or a class's dict along its MRO?
static bool dynamoForbidden(PyObject *callable) {
  static PyObject *mark = PyUnicode_InternFromString("_dynamo_forbidden");
  PyObject *target =
      PyMethod_Check(callable) ? PyMethod_GET_FUNCTION(callable) : callable;
  PyObject *found = nullptr;
  if (PyFunction_Check(target)) {
    PyObject *dict = reinterpret_cast<PyFunctionObject *>(target)->func_dict;
    found = dict ? PyDict_GetItemWithError(dict, mark) : nullptr;
  } else if (PyType_Check(target)) {
    PyObject *mro = reinterpret_cast<PyTypeObject *>(target)->tp_mro;
    for (Py_ssize_t i = 0; mro && !found && i < PyTuple_GET_SIZE(mro); ++i) {
      PyObject *dict =
          reinterpret_cast<PyTypeObject *>(PyTuple_GET_ITEM(mro, i))->tp_dict;
      found = dict ? PyDict_GetItemWithError(dict, mark) : nullptr;
    }
  }
  if (!found) {
    PyErr_Clear();
    return false;
  }
  return PyObject_IsTrue(found) == 1;
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
  if (dynamoForbidden(callable)) {
    static PyObject *forbid = PyUnicode_InternFromString("forbid");
    return invokeSpecial(forbid, callable, args, kw);
  }
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
  // A function held as an object's attribute (an LR scheduler replaces its
  // optimizer's step so) goes to the tracker too, with no object: the
  // tracker knows which object such a function stands for.
  bool heldFunction = PyFunction_Check(callable);
  if (heldFunction || (PyMethod_Check(callable) &&
                       PyFunction_Check(PyMethod_GET_FUNCTION(callable)))) {
    auto dot = callableSrc.rfind('.');
    PyObject *rule = nullptr;
    if (dot != std::string::npos)
      rule = callTrackerForResult(
          "on_native_method",
          Py_BuildValue("(sOO)", callableSrc.substr(0, dot).c_str(),
                        heldFunction ? Py_None : PyMethod_GET_SELF(callable),
                        callable));
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
  // A list, dict, set or bytearray changed by its own method (append,
  // update, pop, ...): a side effect unless the call made the container.
  if (PyCFunction_Check(callable) && isMutatingMethod(callable)) {
    auto dot = callableSrc.rfind('.');
    std::string selfSrc =
        dot == std::string::npos ? "" : callableSrc.substr(0, dot);
    PyObject *argTuple = PyTuple_New(Py_ssize_t(args.size()));
    for (size_t i = 0; argTuple && i < args.size(); ++i) {
      Py_INCREF(args[i]);
      PyTuple_SET_ITEM(argTuple, Py_ssize_t(i), args[i]);
    }
    if (argTuple)
      callTracker("on_container_method",
                  Py_BuildValue("(OssNO)", PyCFunction_GET_SELF(callable),
                                reinterpret_cast<PyCFunctionObject *>(callable)
                                    ->m_ml->ml_name,
                                selfSrc.c_str(), argTuple, kw ? kw : Py_None));
    else
      PyErr_Clear();
  }
  // A native call (torch op, builtin, library code): the Python scalars it
  // gets decide what it does. A size given to an ATen-backed torch function
  // lands in the graph's attributes, where a dynamic merge checks it.
  bool aten = isAtenCallable(callable);
  // A type query reads no value: a size passed to it stays unpinned.
  bool typeQuery = isTypeQuery(callable);
  std::vector<std::pair<PyObject *, std::string>> sizes =
      std::move(pendingItemSizes);
  pendingItemSizes.clear();
  for (size_t i = 0; i < args.size(); ++i) {
    if (aten && isSizeInt(args[i], sources[i]))
      sizes.push_back({args[i], sources[i]});
    else if (!typeQuery && !sources[i].empty() && isGuardableScalar(args[i]))
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
  // from this one run (capture/dynamic.py).
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
  // Stack: [NULL, callable, args...] (3.11, 3.12) or [callable, NULL,
  // args...] (3.13), or for a method [method, self, args...].
  std::vector<PyObject *> args;
  std::vector<std::string> sources;
  size_t base = stack.size() - nargs;
  Slot &first = stack[base - 2], &second = stack[base - 1];
  PyObject *callable;
  std::string callableSrc;
  if (!first.value) {
    callable = second.value, callableSrc = second.source;
  } else {
    callable = first.value, callableSrc = first.source;
    if (second.value)
      args.push_back(second.value), sources.push_back(second.source);
  }
  for (size_t i = base; i < stack.size(); ++i)
    args.push_back(stack[i].value), sources.push_back(stack[i].source);
  PyObject *kw = kwnames;
  kwnames = nullptr;
  noteItemSizes(stack.begin() + base, stack.end());
  callSource.clear(), callItems.reset();
  bool top = enterTop(nargs, kw);
  PyObject *result = invoke(callable, callableSrc, args, sources, kw);
  if (top)
    leaveTop();
  if (result && callSource.empty() && !callItems)
    callSource =
        sizeCallSource(callable, callableSrc, args, sources, kw, result);
  dropTop(stack.size() - (base - 2));
  return result;
}

/// f(*args, **kwargs): the tuple's items keep their shadows where the tuple
/// was built here or came in as a *args parameter.
std::string Evaluator::keywordSource(const Slot &kwargs, PyObject *key) {
  if (kwargs.keywords &&
      dictVersion(kwargs.value) == kwargs.keywords->version) {
    const char *name = PyUnicode_AsUTF8(key);
    for (const auto &[k, source] : kwargs.keywords->sources)
      if (name && k == name)
        return source;
  }
  return itemSource(kwargs.source, key);
}

void Evaluator::mergeKeywordSources(Slot &target, const Slot &merged) {
  if (!PyDict_CheckExact(target.value) || !PyDict_Check(merged.value))
    return;
  KeywordSources out{dictVersion(target.value), {}};
  if (target.keywords) // those of the items the target had (valid before)
    out.sources = target.keywords->sources;
  Py_ssize_t pos = 0;
  PyObject *key, *val;
  while (PyDict_Next(merged.value, &pos, &key, &val)) {
    std::string source =
        PyUnicode_Check(key) ? keywordSource(merged, key) : std::string();
    if (!source.empty())
      out.sources.emplace_back(PyUnicode_AsUTF8(key), std::move(source));
  }
  if (out.sources.empty())
    target.keywords.reset();
  else
    target.keywords = std::make_shared<const KeywordSources>(std::move(out));
}

PyObject *Evaluator::callFunctionEx(bool hasKwargs) {
  Slot kwargs = hasKwargs ? pop() : Slot{};
  Slot callargs = pop();
  // [NULL, func] (3.11, 3.12) or [func, NULL] (3.13).
  Slot below = pop(), func = pop();
  if (!func.value)
    std::swap(func, below);
  Py_XDECREF(below.value);
  PyObject *result = nullptr;
  PyObject *tuple = nullptr;
  if (!PyTuple_CheckExact(callargs.value) &&
      !Py_TYPE(callargs.value)->tp_iter && !PySequence_Check(callargs.value)) {
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
        sources.push_back(keywordSource(kwargs, key));
      }
      ok = kw != nullptr;
    } else if (kwargs.value && !PyDict_Check(kwargs.value)) {
      PyErr_SetString(PyExc_TypeError, "argument after ** must be a mapping");
      ok = false;
    }
    if (ok) {
      PyObject *saved = spreadTuple;
      spreadTuple =
          kw || !PyTuple_CheckExact(callargs.value) ? nullptr : callargs.value;
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

namespace {
/// Sets what MAKE_FUNCTION's flag `flag` (SET_FUNCTION_ATTRIBUTE's argument)
/// names on the new function `fn`.
int setFunctionAttr(PyObject *fn, int flag, PyObject *v) {
  switch (flag) {
  case 0x08:
    return PyFunction_SetClosure(fn, v);
  case 0x04:
    // Annotations come as a flat (name, value, ...) tuple, which
    // PyFunction_SetAnnotations refuses: CPython's own eval loop stores the
    // tuple and func.__annotations__ turns it into a dict on first read.
    Py_XSETREF(reinterpret_cast<PyFunctionObject *>(fn)->func_annotations,
               Py_NewRef(v));
    return 0;
  case 0x02:
    return PyFunction_SetKwDefaults(fn, v);
  case 0x01:
    return PyFunction_SetDefaults(fn, v);
  default:
    PyErr_Format(PyExc_SystemError, "dynoc: unknown function attribute %d",
                 flag);
    return -1;
  }
}
} // namespace

PyObject *Evaluator::makeFunction(int flags) {
  Slot codeObj = pop();
  PyObject *fn = PyFunction_New(codeObj.value, f.globals);
  Py_DECREF(codeObj.value);
  int rc = fn ? 0 : -1;
  // On the stack below the code: defaults, kwdefaults, annotations, closure.
  for (int flag : {0x08, 0x04, 0x02, 0x01}) {
    if (!(flags & flag))
      continue;
    Slot v = pop();
    if (rc == 0)
      rc = setFunctionAttr(fn, flag, v.value);
    Py_DECREF(v.value);
  }
  if (rc < 0) {
    Py_XDECREF(fn);
    return nullptr;
  }
  return fn;
}

bool Evaluator::setFunctionAttribute(int flag) {
  Slot fn = pop(), v = pop();
  int rc = setFunctionAttr(fn.value, flag, v.value);
  Py_DECREF(v.value);
  if (rc < 0) {
    Py_DECREF(fn.value);
    return false;
  }
  push(fn.value);
  return true;
}

/// Opcodes for calls and function objects.
Evaluator::Step Evaluator::execCalls(Op op, int oparg) {
  PyObject *r = nullptr;
  switch (op) {
  case Op::KwNames:
    kwnames = PyTuple_GET_ITEM(co->co_consts, oparg);
    break;
  case Op::CallKw: // 3.13: the keyword names are on top
  {
    Slot names = pop();
    kwnames = names.value;
    r = call(oparg);
    Py_DECREF(names.value);
    STEP_FAIL_IF_NULL(r);
    push(r, std::move(callSource), std::move(callItems));
    callSource.clear(), callItems.reset();
    break;
  }
  case Op::Call:
    r = call(oparg);
    STEP_FAIL_IF_NULL(r);
    push(r, std::move(callSource), std::move(callItems));
    callSource.clear(), callItems.reset();
    break;
  case Op::CallFunctionEx:
    callSource.clear(), callItems.reset();
    r = callFunctionEx(oparg & 1);
    STEP_FAIL_IF_NULL(r);
    push(r, std::move(callSource), std::move(callItems));
    callSource.clear(), callItems.reset();
    break;
  case Op::MakeFunction:
    r = makeFunction(oparg);
    STEP_FAIL_IF_NULL(r);
    push(r);
    break;
  case Op::SetFunctionAttribute: // 3.13: [attribute, function]
    if (!setFunctionAttribute(oparg))
      return Step::Error;
    break;
  default:
    return Step::Unhandled;
  }
  return Step::Done;
}

namespace {
/// (value or None, source, bound) of a slot.
PyObject *slotTuple(const Slot &s) {
  return Py_BuildValue("(OsO)", s.value ? s.value : Py_None, s.source.c_str(),
                       s.value ? Py_True : Py_False);
}
PyObject *slotList(const std::vector<Slot> &slots) {
  PyObject *list = PyList_New(Py_ssize_t(slots.size()));
  for (size_t i = 0; list && i < slots.size(); ++i) {
    PyObject *t = slotTuple(slots[i]);
    if (!t) {
      Py_CLEAR(list);
      break;
    }
    PyList_SET_ITEM(list, Py_ssize_t(i), t);
  }
  return list;
}
} // namespace

bool Evaluator::enterTop(int nargs, PyObject *kwnames) {
  RegionState &st = regionState();
  if (!st.resumable || !call_.entry || st.topCall ||
      st.frames.size() != st.entryDepth + 1)
    return false;
  topNargs = nargs, topKwnames = kwnames, topCondition = nullptr;
  topMark = callTrackerForResult("call_mark", PyTuple_New(0));
  st.topCall = this;
  return true;
}

bool Evaluator::nextIsConditionalJump() {
  const auto *instrs =
      reinterpret_cast<const uint8_t *>(PyBytes_AS_STRING(code));
  Py_ssize_t n = PyBytes_GET_SIZE(code) / 2;
  const unsigned char *caches = runtime().inlineCaches;
  Py_ssize_t i = pc + 1 + caches[instrs[2 * pc]];
  int ext = 0;
  while (i < n) {
    int oparg = instrs[2 * i + 1] | ext;
    Op op = decodeOp(instrs[2 * i], oparg);
    Py_ssize_t next = i + 1 + caches[instrs[2 * i]];
    if (op == Op::ExtendedArg) {
      ext = oparg << 8;
      i = next;
      continue;
    }
    if (op != Op::PopJumpIfFalse && op != Op::PopJumpIfTrue)
      return false;
    topJumpTarget = next + oparg;
    topJumpNext = next;
    topJumpIfTrue = op == Op::PopJumpIfTrue;
    return true;
  }
  return false;
}

void Evaluator::leaveTop() {
  regionState().topCall = nullptr;
  topCondition = nullptr;
  Py_CLEAR(topMark);
}

PyObject *Evaluator::snapshot() const {
  const auto *instrs =
      reinterpret_cast<const uint8_t *>(PyBytes_AS_STRING(code));
  Py_ssize_t next = pc + 1 + runtime().inlineCaches[instrs[2 * pc]];
  PyObject *out = Py_BuildValue(
      "{s:n,s:n,s:i,s:O,s:N,s:N,s:O}", "pc", pc, "next", next, "nargs",
      topNargs, "kwnames", topKwnames ? topKwnames : Py_None, "stack",
      slotList(stack), "locals", slotList(locals), "mark",
      topMark ? topMark : Py_None);
  if (out && topCondition) { // a conditional jump on a tensor, not a CALL
    PyObject *jump =
        Py_BuildValue("(OnOn)", topCondition, topJumpTarget,
                      topJumpIfTrue ? Py_True : Py_False, topJumpNext);
    if (!jump || PyDict_SetItemString(out, "jump", jump) < 0)
      Py_CLEAR(out);
    Py_XDECREF(jump);
  }
  return out;
}

} // namespace dynoc::capture
