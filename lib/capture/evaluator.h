//===- evaluator.h - dynoc's bytecode evaluator with shadow values -*- C++
//-*-===//
#ifndef DYNOC_CAPTURE_EVALUATOR_H
#define DYNOC_CAPTURE_EVALUATOR_H

#include <Python.h>

#include <string>
#include <vector>

namespace dynoc::capture {

/// Objects the evaluator needs from Python, set once by `_dynoc_C.init`.
struct Runtime {
  PyTypeObject *tensorType = nullptr;
  PyObject *moduleType = nullptr;      // torch.nn.Module
  PyObject *followPredicate = nullptr; // code -> bool: inline this function?
  PyObject *forwardOf = nullptr;       // module -> forward function or None
  PyObject *followCache = nullptr;     // dict: code -> bool
  unsigned char inlineCaches[256] = {};
};
Runtime &runtime();

/// The capture region running on this thread.
struct RegionState {
  PyObject *tracker = nullptr; // dynoc._recorder.Tracker of the region
  bool passthrough = false;    // inside a call the evaluator does not follow
  PyCodeObject *pendingCode = nullptr;
  std::vector<std::string> pendingSources;
};
RegionState &regionState();

} // namespace dynoc::capture

#endif // DYNOC_CAPTURE_EVALUATOR_H
