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
    dynoc_frame_view view = {code, frame->f_globals, frame->f_builtins,
                             frame->localsplus, frame->f_func->func_closure,
                             (PyObject *)frame->f_func, frame->f_locals};
    PyObject *result = NULL;
    if (dynoc_evaluate_frame(&view, &result))
      return result;
  }
  return _PyEval_EvalFrameDefault(tstate, frame, throwflag);
}

void dynoc_add_traceback(PyCodeObject *code, PyObject *globals, int instr) {
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  PyFrameObject *f = PyFrame_New(PyThreadState_Get(), code, globals, NULL);
  if (!f) {
    PyErr_Clear();
    PyErr_Restore(type, value, tb);
    return;
  }
  /* The entry's line and columns come from the frame's last instruction. */
  f->f_frame->prev_instr = _PyCode_CODE(code) + instr;
  PyErr_Restore(type, value, tb);
  PyTraceBack_Here(f);
  Py_DECREF(f);
}

void dynoc_set_frame_hook(int enabled) {
  PyThreadState *ts = PyThreadState_Get();
  _PyInterpreterState_SetEvalFrameFunc(
      ts->interp, enabled ? dynoc_eval_frame : _PyEval_EvalFrameDefault);
}
