//===- exceptions.h - CPython's exception operations ------------*- C++ -*-===//
//
// The exception-related parts of CPython 3.11's evaluation loop that the
// evaluator mirrors, with CPython's checks and messages: `except` and
// `except*` type checks, exception group matching and re-raising, NameError.
// CPython keeps some of these internal (not exported from libpython), so
// they are written here from its semantics.
//
//===----------------------------------------------------------------------===//
#ifndef DYNOC_CAPTURE_EXCEPTIONS_H
#define DYNOC_CAPTURE_EXCEPTIONS_H

#include <Python.h>

namespace dynoc::capture {

/// An `except` clause's type must be exception classes (CPython checks
/// before matching); false with CPython's TypeError otherwise.
bool validExceptType(PyObject *type);

/// An `except*` clause's type: valid for `except`, and no exception group
/// class.
bool validExceptStarType(PyObject *type);

/// CHECK_EG_MATCH's split of `exc` by `type` into `match` and `rest` (new
/// references, None for no part): a naked exception that matches is wrapped
/// in a group. False with an exception set on error.
bool matchExceptionGroup(PyObject *exc, PyObject *type, PyObject *&match,
                         PyObject *&rest);

/// PREP_RERAISE_STAR: from the exception group `orig` that entered a
/// try/except* and the list `excs` its clauses raised or re-raised, the
/// exception to raise (None for none); a new reference, or null on error.
PyObject *prepReraiseStar(PyObject *orig, PyObject *excs);

/// NameError(message naming `name`) with its `name` attribute set, as
/// CPython raises it (tracebacks' "Did you mean" suggestions read it).
void raiseNameError(const char *format, PyObject *name);

} // namespace dynoc::capture

#endif // DYNOC_CAPTURE_EXCEPTIONS_H
