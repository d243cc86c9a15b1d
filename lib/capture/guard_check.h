//===- guard_check.h - tensor guards checked in C ---------------*- C++ -*-===//
#ifndef DYNOC_CAPTURE_GUARD_CHECK_H
#define DYNOC_CAPTURE_GUARD_CHECK_H

#include <Python.h>

namespace dynoc::capture {

/// _dynoc_C.check_tensor(t, dtype, device, requires_grad, size, stride): True
/// when `t` is a tensor of that dtype, device type and requires_grad whose
/// sizes and strides match (None: a dynamic dim, which must not be one the
/// caller marked static). Raises only for malformed arguments or a failing
/// attribute read. Needs init() first (the tensor type).
PyObject *checkTensor(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                      PyObject *kwnames);

/// The tensor guard itself: 1 when `t` passes, 0 when not, -1 with an error
/// set. `size` and `stride` are sequences whose None items are dynamic dims.
int checkTensorGuard(PyObject *t, PyObject *dtype, PyObject *device,
                     PyObject *requiresGrad, PyObject *size, PyObject *stride);

/// 1 when `t` is a tensor of `dtype`, 0 when not, -1 with an error set.
int tensorOfDtype(PyObject *t, PyObject *dtype);

/// New references to a tensor's sizes (torch.Size) and strides (a tuple),
/// or null with an error set.
PyObject *tensorSizes(PyObject *t);
PyObject *tensorStrides(PyObject *t);

/// A new reference to getattr(obj, name) as attr() finds it, or null with
/// an error set.
PyObject *attrLookup(PyObject *obj, PyObject *name);

/// _dynoc_C.attr(obj, name): getattr(obj, name), with nn.Module's
/// submodules, parameters and buffers found without the AttributeError and
/// Python-level __getattr__ call that the ordinary lookup goes through.
PyObject *attr(PyObject *self, PyObject *const *args, Py_ssize_t nargs);

/// _dynoc_C.same_versions(tensors, versions): True when each tensor's
/// _version equals the int at its index (two lists of one length).
PyObject *sameVersions(PyObject *self, PyObject *const *args, Py_ssize_t nargs);

} // namespace dynoc::capture

#endif // DYNOC_CAPTURE_GUARD_CHECK_H
