//===- status.h - building dynrt_status_t (internal) ------------*- C++ -*-===//
#ifndef DYNRT_STATUS_INTERNAL_H
#define DYNRT_STATUS_INTERNAL_H

#include "dynrt/dynrt.h"

#include <exception>
#include <string>

struct dynrt_status_t {
  dynrt_status_code_t code;
  std::string message;
};

namespace dynrt {
/// Returns a new error status; never fails (a failed allocation becomes a
/// static out-of-memory status).
dynrt_status_t *makeStatus(dynrt_status_code_t code, std::string message);

/// The status of a host graph function's nonzero code (model_abi.h):
/// DYNOC_RUN_DIVISION_BY_ZERO is ATen's ZeroDivisionError.
dynrt_status_t *hostGraphFailed(const std::string &graph, int rc);

/// Runs `body` (returning a status), turning a C++ exception into a status
/// naming `fn`: nothing throws across the C API.
template <class F> dynrt_status_t *guarded(const char *fn, F body) {
  try {
    return body();
  } catch (const std::exception &e) {
    return makeStatus(DYNRT_INTERNAL, std::string(fn) + ": " + e.what());
  }
}
} // namespace dynrt

#endif // DYNRT_STATUS_INTERNAL_H
