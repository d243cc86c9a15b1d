/*===- frame_hook.c - PEP 523 frame hook ---------------------------------===*/
/* The one file that knows CPython's internal frame layout. What differs
 * between 3.11, 3.12 and 3.13 is the block of accessors just below, and the
 * frame cleanup that 3.12 moved from a frame's caller to the function that
 * evaluated it (dynoc_clear_frame). */
#define Py_BUILD_CORE
#include <Python.h>
#include <frameobject.h>
#include <internal/pycore_frame.h>

#include "frame_hook.h"

typedef struct _PyInterpreterFrame Frame;

#if PY_MAJOR_VERSION != 3 || PY_MINOR_VERSION < 11 || PY_MINOR_VERSION > 13
#error "dynoc's frame hook supports CPython 3.11, 3.12 and 3.13"
#endif

#if PY_MINOR_VERSION == 11
#define FRAME_CODE(f) ((f)->f_code)
#define FRAME_FUNC(f) ((PyObject *)(f)->f_func)
#define CURRENT_FRAME(ts) ((ts)->cframe->current_frame)
/* prev_instr: the instruction before the next (a fresh frame's: code - 1). */
#define FRAME_IS_FRESH(f) ((f)->prev_instr == _PyCode_CODE(FRAME_CODE(f)) - 1)
#define FRAME_SET_INSTR(f, i)                                                  \
  ((f)->prev_instr = _PyCode_CODE(FRAME_CODE(f)) + (i))
#define TRACING_ACTIVE(ts) ((ts)->cframe->use_tracing != 0)
#define CALLEE_CLEARS_FRAME 0
#elif PY_MINOR_VERSION == 12
#define FRAME_CODE(f) ((f)->f_code)
#define FRAME_FUNC(f) ((f)->f_funcobj)
#define CURRENT_FRAME(ts) ((ts)->cframe->current_frame)
#define FRAME_IS_FRESH(f) ((f)->prev_instr == _PyCode_CODE(FRAME_CODE(f)) - 1)
#define FRAME_SET_INSTR(f, i)                                                  \
  ((f)->prev_instr = _PyCode_CODE(FRAME_CODE(f)) + (i))
#define TRACING_ACTIVE(ts)                                                     \
  ((ts)->c_tracefunc || (ts)->c_profilefunc || monitoring_active(ts))
#define CALLEE_CLEARS_FRAME 1
#else /* 3.13 */
#define FRAME_CODE(f) ((PyCodeObject *)(f)->f_executable)
#define FRAME_FUNC(f) ((f)->f_funcobj)
#define CURRENT_FRAME(ts) ((ts)->current_frame)
/* instr_ptr: the instruction running (a fresh frame's: the first). */
#define FRAME_IS_FRESH(f) ((f)->instr_ptr == _PyCode_CODE(FRAME_CODE(f)))
#define FRAME_SET_INSTR(f, i)                                                  \
  ((f)->instr_ptr = _PyCode_CODE(FRAME_CODE(f)) + (i))
#define TRACING_ACTIVE(ts)                                                     \
  ((ts)->c_tracefunc || (ts)->c_profilefunc || monitoring_active(ts))
#define CALLEE_CLEARS_FRAME 1
#endif

#if PY_MINOR_VERSION >= 12
#include <internal/pycore_interp.h>

/* A sys.monitoring tool (coverage.py on 3.12, a debugger) listens for some
 * event: CPython's loop reports them, the evaluator would not. */
static int monitoring_active(PyThreadState *ts) {
  for (int i = 0; i < _PY_MONITORING_UNGROUPED_EVENTS; i++)
    if (ts->interp->monitors.tools[i])
      return 1;
  return 0;
}
#endif

#if CALLEE_CLEARS_FRAME
/* A frame object that outlives the call (locals(), a traceback) takes the
 * frame's data, as CPython's own cleanup does (its take_ownership). */
static void move_frame_into_object(PyFrameObject *fo, Frame *frame) {
  PyCodeObject *code = FRAME_CODE(frame);
  if (frame->owner != FRAME_OWNED_BY_CSTACK &&
      _PyInterpreterFrame_LASTI(frame) < code->_co_firsttraceable)
    FRAME_SET_INSTR(frame, code->_co_firsttraceable); /* never ran */
  /* f_back from the caller's chain, while the frame is still linked to it. */
  PyFrameObject *back = fo->f_back ? NULL : PyFrame_GetBack(fo);
  if (!back)
    PyErr_Clear();
  Py_ssize_t size = (char *)&frame->localsplus[frame->stacktop] - (char *)frame;
  Py_INCREF(code);
  memcpy(fo->_f_frame_data, frame, size);
  frame = (Frame *)fo->_f_frame_data;
  fo->f_frame = frame;
  frame->owner = FRAME_OWNED_BY_FRAME_OBJECT;
  frame->previous = NULL;
  if (back)
    fo->f_back = back;
  if (!PyObject_GC_IsTracked((PyObject *)fo))
    PyObject_GC_Track(fo);
}

/* Gives the frame's slot of the thread's frame stack back (CPython's
 * _PyThreadState_PopFrame, exported from 3.13 on). */
static void pop_frame(PyThreadState *ts, Frame *frame) {
#if PY_MINOR_VERSION >= 13
  _PyThreadState_PopFrame(ts, frame);
#else
  PyObject **base = (PyObject **)frame;
  if (base == &ts->datastack_chunk->data[0]) {
    _PyStackChunk *chunk = ts->datastack_chunk;
    _PyStackChunk *previous = chunk->previous;
    ts->datastack_top = &previous->data[previous->top];
    ts->datastack_chunk = previous;
    ts->datastack_limit = (PyObject **)((char *)previous + previous->size);
    PyObjectArenaAllocator arena;
    PyObject_GetArenaAllocator(&arena);
    arena.free(arena.ctx, chunk, chunk->size);
  } else {
    ts->datastack_top = base;
  }
#endif
}

/* From 3.12 on, the function that evaluated a frame clears it and pops it
 * off the thread's frame stack (3.11's caller did): CPython's
 * clear_thread_frame, which it does not export. */
static void dynoc_clear_frame(PyThreadState *ts, Frame *frame) {
  PyObject *type, *value, *tb; /* the result's exception, kept aside */
  PyErr_Fetch(&type, &value, &tb);
  PyCodeObject *code = FRAME_CODE(frame);
  PyFrameObject *fo = frame->frame_obj;
  frame->frame_obj = NULL;
  if (fo && Py_REFCNT(fo) > 1) {
    move_frame_into_object(fo, frame);
    Py_DECREF(fo);
  } else {
    Py_XDECREF(fo);
    for (int i = 0; i < frame->stacktop; i++)
      Py_XDECREF(frame->localsplus[i]);
    Py_XDECREF(frame->f_locals);
    Py_DECREF(frame->f_funcobj);
  }
  Py_DECREF(code);
  pop_frame(ts, frame);
  PyErr_Restore(type, value, tb);
}
#endif

static PyObject *dynoc_eval_frame(PyThreadState *tstate, Frame *frame,
                                  int throwflag) {
  PyCodeObject *code = FRAME_CODE(frame);
  /* Only fresh frames of plain functions: generators resume mid-code. */
  int plain = !(code->co_flags & (CO_GENERATOR | CO_COROUTINE |
                                  CO_ASYNC_GENERATOR | CO_ITERABLE_COROUTINE));
  if (!throwflag && FRAME_IS_FRESH(frame) && plain) {
    PyObject *func = FRAME_FUNC(frame);
    dynoc_frame_view view = {code,
                             frame->f_globals,
                             frame->f_builtins,
                             frame->localsplus,
                             ((PyFunctionObject *)func)->func_closure,
                             func,
                             frame->f_locals,
                             frame};
    PyObject *result = NULL;
    if (dynoc_evaluate_frame(&view, &result)) {
#if CALLEE_CLEARS_FRAME
      dynoc_clear_frame(tstate, frame);
#endif
      return result;
    }
  }
  return _PyEval_EvalFrameDefault(tstate, frame, throwflag);
}

void dynoc_frame_enter(void *frame) {
  Frame *f = frame;
  PyThreadState *ts = PyThreadState_Get();
  /* `previous` stays set after the frame leaves: clearing the frame links a
   * frame object that outlives it to its caller's through it. */
  f->previous = CURRENT_FRAME(ts);
  CURRENT_FRAME(ts) = f;
}

void dynoc_frame_leave(void *frame) {
  Frame *f = frame;
  CURRENT_FRAME(PyThreadState_Get()) = f->previous;
}

void dynoc_frame_publish_at(void *frame, int instr) {
  /* A frame before its first traceable instruction counts as incomplete
   * (skipped by sys._getframe): the index makes it a running frame. */
  FRAME_SET_INSTR((Frame *)frame, instr);
}

int dynoc_enter_frame_call(void) {
#if PY_MINOR_VERSION >= 12
  /* Python frames count against the recursion limit apart from C calls. */
  PyThreadState *ts = PyThreadState_Get();
  if (ts->py_recursion_remaining <= 0) {
    PyErr_SetString(PyExc_RecursionError, "maximum recursion depth exceeded");
    return -1;
  }
  if (Py_EnterRecursiveCall(""))
    return -1;
  ts->py_recursion_remaining--;
  return 0;
#else
  return Py_EnterRecursiveCall("") ? -1 : 0; /* nonzero on error */
#endif
}

void dynoc_leave_frame_call(void) {
#if PY_MINOR_VERSION >= 12
  PyThreadState_Get()->py_recursion_remaining++;
#endif
  Py_LeaveRecursiveCall();
}

void dynoc_recursion_headroom(int frames) {
  PyThreadState *ts = PyThreadState_Get();
#if PY_MINOR_VERSION >= 12
  ts->py_recursion_remaining += frames;
#else
  ts->recursion_remaining += frames;
#endif
}

void dynoc_add_traceback(void *frame, int instr) {
  Frame *f = frame;
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  FRAME_SET_INSTR(f, instr);
  /* The frame is the thread's current one (dynoc_frame_enter): CPython's
   * public call makes its frame object. */
  PyFrameObject *fo =
      CURRENT_FRAME(PyThreadState_Get()) == f ? PyEval_GetFrame() : NULL;
  if (!fo) {
    PyErr_Clear();
    PyErr_Restore(type, value, tb);
    return;
  }
  PyErr_Restore(type, value, tb);
  PyTraceBack_Here(fo);
}

int dynoc_tracing_active(void) { return TRACING_ACTIVE(PyThreadState_Get()); }

void dynoc_pause_tracing(void) {
  PyThreadState_EnterTracing(PyThreadState_Get());
}

void dynoc_resume_tracing(void) {
  PyThreadState_LeaveTracing(PyThreadState_Get());
}

void dynoc_set_frame_hook(int enabled) {
  PyThreadState *ts = PyThreadState_Get();
  _PyInterpreterState_SetEvalFrameFunc(
      ts->interp, enabled ? dynoc_eval_frame : _PyEval_EvalFrameDefault);
}
