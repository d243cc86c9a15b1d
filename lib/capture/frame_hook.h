/*===- frame_hook.h - PEP 523 frame hook (C shim over CPython internals) -===*/
/* The only code that touches CPython 3.11's internal frame layout; the
 * evaluator (C++) sees a frame through this small interface. */
#ifndef DYNOC_CAPTURE_FRAME_HOOK_H
#define DYNOC_CAPTURE_FRAME_HOOK_H

#include <Python.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What the evaluator needs of a frame that is about to run. */
typedef struct dynoc_frame_view {
  PyCodeObject *code;    /* borrowed */
  PyObject *globals;     /* borrowed */
  PyObject *builtins;    /* borrowed */
  PyObject **localsplus; /* borrowed; co_nlocalsplus entries, arguments bound */
  PyObject *closure;     /* borrowed; the function's cells (tuple) or NULL */
  PyObject *func;        /* borrowed; the function being called */
  PyObject *locals;      /* borrowed; module/class frames' namespace or NULL */
} dynoc_frame_view;

/* Decides whether the evaluator runs `view`; returns 1 and sets *result (a new
 * reference, or NULL with an exception set) when it did, 0 to let CPython run
 * the frame. Implemented by the evaluator. */
int dynoc_evaluate_frame(const dynoc_frame_view *view, PyObject **result);

/* Adds a traceback entry for a frame the evaluator runs (CPython adds one
 * per frame an exception passes; the evaluator's frames have no frame
 * object, so a detached one stands in, at instruction index `instr`). */
void dynoc_add_traceback(PyCodeObject *code, PyObject *globals, int instr);

/* Installs (1) or removes (0) the hook on the current interpreter. */
void dynoc_set_frame_hook(int enabled);

#ifdef __cplusplus
}
#endif

#endif
