//===- evaluator.cpp - dynoc's bytecode evaluator with shadow values ------===//
//
// Runs a CPython frame (3.11, 3.12 or 3.13: opcodes.h) for real, one
// instruction at a time, while keeping a shadow for every value: the source it
// came from, in Dynamo's words
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
#include "evaluator_internal.h"
#include "exception_table.h"

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

PyObject *Evaluator::run() {
  code = PyCode_GetCode(co);
  if (!code)
    return nullptr;
  // CPython's own loop counts each frame against the recursion limit; an
  // evaluated frame does too (and uses more C stack than CPython's).
  if (dynoc_enter_frame_call() < 0)
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
      dynoc_leave_frame_call();
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
    Op op = decodeOp(opcode, oparg); // jumps: relative to `next`
    PyObject *r = nullptr;
#define FAIL_IF_NULL(x)                                                        \
  if (!(x))                                                                    \
    return nullptr;
    switch (op) {
    case Op::Nop:
      break;
    case Op::ExtendedArg:
      ext = oparg << 8;
      break;
    case Op::PopTop:
      Py_XDECREF(pop().value);
      break;
    case Op::EndFor:
      dropTop(oparg);
      break;
    case Op::PushNull:
      push(nullptr);
      break;
    case Op::ReturnConst:
      r = PyTuple_GET_ITEM(co->co_consts, oparg);
      Py_INCREF(r);
      return r;
    case Op::ReturnValue: {
      Slot s = pop();
      noteReturnedSizes(s);
      return s.value;
    }
    case Op::PopJumpIfFalse:
    case Op::PopJumpIfTrue: {
      Slot c = pop();
      // A branch on a tensor here breaks the graph: one to resume after.
      bool top = isTensor(c.value) && enterTop(0, nullptr);
      if (top) {
        topCondition = c.value;
        topJumpTarget = next + oparg;
        topJumpNext = next;
        topJumpIfTrue = op == Op::PopJumpIfTrue;
      }
      int t = truth(c);
      if (top)
        leaveTop();
      Py_DECREF(c.value);
      if (t < 0)
        return nullptr;
      if (bool(t) == (op == Op::PopJumpIfTrue))
        next += oparg;
      break;
    }
    case Op::PopJumpIfNone:
    case Op::PopJumpIfNotNone: {
      Slot c = pop();
      if (!c.source.empty())
        callTracker("on_guard_none", Py_BuildValue("(si)", c.source.c_str(),
                                                   c.value == Py_None));
      bool isNone = c.value == Py_None;
      Py_DECREF(c.value);
      if (isNone == (op == Op::PopJumpIfNone))
        next += oparg;
      break;
    }
    case Op::JumpIfFalseOrPop:
    case Op::JumpIfTrueOrPop: {
      int t = truth(stack.back());
      if (t < 0)
        return nullptr;
      if (bool(t) == (op == Op::JumpIfTrueOrPop))
        next += oparg;
      else
        Py_DECREF(pop().value);
      break;
    }
    case Op::Jump:
      next += oparg;
      break;
    case Op::GetIter: {
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
    case Op::ForIter: {
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
        next += oparg;
      }
      break;
    }
    case Op::Copy: {
      Slot s = stack[stack.size() - oparg];
      Py_XINCREF(s.value);
      stack.push_back(std::move(s));
      break;
    }
    case Op::Swap:
      std::swap(stack.back(), stack[stack.size() - oparg]);
      break;
    case Op::Unsupported:
      PyErr_Format(PyExc_SystemError,
                   "dynoc: opcode %d of CPython %s reached the evaluator",
                   opcode, kBytecodeVersion);
      return nullptr;
    default: {
      // The other families, each in its file (evaluator_internal.h).
      Step step = Step::Unhandled;
      for (auto family : {&Evaluator::execNames, &Evaluator::execCalls,
                          &Evaluator::execOperators, &Evaluator::execContainers,
                          &Evaluator::execMatch, &Evaluator::execExceptions})
        if ((step = (this->*family)(op, oparg)) != Step::Unhandled)
          break;
      if (step == Step::Error)
        return nullptr;
      if (step == Step::Unhandled) {
        PyErr_Format(PyExc_SystemError,
                     "dynoc: operation %d (opcode %d) has no implementation",
                     int(op), opcode);
        return nullptr;
      }
      break;
    }
    }
#undef FAIL_IF_NULL
    pc = next;
  }
  PyErr_SetString(PyExc_SystemError, "dynoc: fell off the end of the bytecode");
  return nullptr;
}

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
  const char *why =
      dynoc_tracing_active()
          ? "a trace or profile function or a sys.monitoring tool is active"
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
