//===- dispatcher.h - a compiled region's per-call dispatch in C -*- C++
//-*-===//
//
// _dynoc_C.Dispatcher: what python/dynoc/jit/dispatch.py makes of a region's
// variants for calls of positional arguments. It builds the region's locals
// L, runs each variant's guards as a small program of checks (tensor
// guards, module attribute compares, grad mode, hooks) with the guards it
// cannot express left to a compiled Python check, and calls the first
// variant whose guards pass. Anything it cannot decide is the general
// path's (it returns the `miss` object).
//
//===----------------------------------------------------------------------===//
#ifndef DYNOC_CAPTURE_DISPATCHER_H
#define DYNOC_CAPTURE_DISPATCHER_H

#include <Python.h>

namespace dynoc::capture {

/// Adds the Dispatcher type to `module`; -1 with an error set on failure.
int addDispatcherType(PyObject *module);

} // namespace dynoc::capture

#endif // DYNOC_CAPTURE_DISPATCHER_H
