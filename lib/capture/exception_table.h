//===- exception_table.h - CPython 3.11 exception table lookup --*- C++ -*-===//
//
// A 3.11 code object lists its try/with handlers in co_exceptiontable, a
// varint-encoded table (CPython's Objects/exception_handling_notes.txt). The
// evaluator looks up the handler of a faulting instruction here.
//
//===----------------------------------------------------------------------===//
#ifndef DYNOC_CAPTURE_EXCEPTION_TABLE_H
#define DYNOC_CAPTURE_EXCEPTION_TABLE_H

#include <Python.h>

namespace dynoc::capture {

struct ExceptionHandler {
  Py_ssize_t target = 0; // instruction index of the handler
  Py_ssize_t depth = 0;  // stack depth to unwind to
  bool pushLasti = false;
};

/// Finds the handler covering instruction index `pc` of `co`; false if none.
bool findExceptionHandler(PyCodeObject *co, Py_ssize_t pc,
                          ExceptionHandler &out);

} // namespace dynoc::capture

#endif // DYNOC_CAPTURE_EXCEPTION_TABLE_H
