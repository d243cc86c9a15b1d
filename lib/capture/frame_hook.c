/*===- frame_hook.c - PEP 523 frame hook ---------------------------------===*/
#define Py_BUILD_CORE
#include <Python.h>
#include <frameobject.h>
#include <internal/pycore_frame.h>

#include "frame_hook.h"

static PyObject *dynoc_eval_frame(PyThreadState *tstate,
                                  struct _PyInterpreterFrame *frame,
                                  int throwflag) {
  PyCodeObject *code = frame->f_code;
  /* Only fresh frames of plain functions: generators resume mid-code. */
  int fresh = frame->prev_instr == _PyCode_CODE(code) - 1;
  int plain = !(code->co_flags & (CO_GENERATOR | CO_COROUTINE |
                                  CO_ASYNC_GENERATOR | CO_ITERABLE_COROUTINE));
  if (!throwflag && fresh && plain) {
    dynoc_frame_view view = {code,
                             frame->f_globals,
                             frame->f_builtins,
                             frame->localsplus,
                             frame->f_func->func_closure,
                             (PyObject *)frame->f_func,
                             frame->f_locals,
                             frame};
    PyObject *result = NULL;
    if (dynoc_evaluate_frame(&view, &result))
      return result;
  }
  return _PyEval_EvalFrameDefault(tstate, frame, throwflag);
}

void dynoc_frame_enter(void *frame) {
  struct _PyInterpreterFrame *f = frame;
  PyThreadState *ts = PyThreadState_Get();
  /* `previous` stays set after the frame leaves: clearing the frame links a
   * frame object that outlives it to its caller's through it. */
  f->previous = ts->cframe->current_frame;
  ts->cframe->current_frame = f;
}

void dynoc_frame_leave(void *frame) {
  struct _PyInterpreterFrame *f = frame;
  PyThreadState_Get()->cframe->current_frame = f->previous;
}

void dynoc_frame_publish_at(void *frame, int instr) {
  struct _PyInterpreterFrame *f = frame;
  /* A frame before its first traceable instruction counts as incomplete
   * (skipped by sys._getframe): the index makes it a running frame. */
  f->prev_instr = _PyCode_CODE(f->f_code) + instr;
}

void dynoc_add_traceback(void *frame, int instr) {
  struct _PyInterpreterFrame *f = frame;
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  f->prev_instr = _PyCode_CODE(f->f_code) + instr;
  /* The frame is the thread's current one (dynoc_frame_enter): CPython's
   * public call makes its frame object. */
  PyFrameObject *fo = PyThreadState_Get()->cframe->current_frame == f
                          ? PyEval_GetFrame()
                          : NULL;
  if (!fo) {
    PyErr_Clear();
    PyErr_Restore(type, value, tb);
    return;
  }
  PyErr_Restore(type, value, tb);
  PyTraceBack_Here(fo);
}

int dynoc_tracing_active(void) {
  return PyThreadState_Get()->cframe->use_tracing != 0;
}

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
