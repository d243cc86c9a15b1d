/*===- frame_hook.h - PEP 523 frame hook (C shim over CPython internals) -===*/
/* The only code that touches CPython's internal frame layout (3.11, 3.12,
 * 3.13); the evaluator (C++) sees a frame through this small interface. */
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
  void *frame;           /* the interpreter frame itself (opaque) */
} dynoc_frame_view;

/* Decides whether the evaluator runs `view`; returns 1 and sets *result (a new
 * reference, or NULL with an exception set) when it did, 0 to let CPython run
 * the frame. Implemented by the evaluator. */
int dynoc_evaluate_frame(const dynoc_frame_view *view, PyObject **result);

/* Makes `frame` the thread's current frame while the evaluator runs it, as
 * CPython's own evaluation loop does: sys._getframe(), locals(), exec/eval
 * without namespaces, warnings' stack levels and callees' f_back see it. */
void dynoc_frame_enter(void *frame);
/* Restores the caller's frame as the current one. */
void dynoc_frame_leave(void *frame);

/* Sets the frame's current instruction index (its f_lineno, f_lasti); the
 * evaluator keeps the frame's local slots (the view's localsplus) equal to
 * its own locals. */
void dynoc_frame_publish_at(void *frame, int instr);

/* Counts an evaluated frame against the recursion limit, as CPython's loop
 * counts each frame it runs: -1 with RecursionError past it. */
int dynoc_enter_frame_call(void);
void dynoc_leave_frame_call(void);

/* Adds `frames` (or, negative, takes them back) to what is left of the
 * recursion limit: dynoc's own Python (the tracker) runs with headroom, so
 * that it works for a program at the limit. */
void dynoc_recursion_headroom(int frames);

/* Adds a traceback entry for the evaluated `frame` at instruction index
 * `instr`, as CPython adds one per frame an exception passes. */
void dynoc_add_traceback(void *frame, int instr);

/* Whether a trace or profile function (sys.settrace, sys.setprofile) is
 * active on this thread: CPython's loop reports its events, the evaluator's
 * would not, so such frames run in CPython. */
int dynoc_tracing_active(void);

/* Suspends (and resumes) the thread's trace and profile functions while
 * dynoc's own Python code runs inside an evaluated frame. */
void dynoc_pause_tracing(void);
void dynoc_resume_tracing(void);

/* Installs (1) or removes (0) the hook on the current interpreter. */
void dynoc_set_frame_hook(int enabled);

#ifdef __cplusplus
}
#endif

#endif
