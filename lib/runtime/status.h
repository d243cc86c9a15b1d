//===- status.h - building dynrt_status_t (internal) ------------*- C++ -*-===//
#ifndef DYNRT_STATUS_INTERNAL_H
#define DYNRT_STATUS_INTERNAL_H

#include "dynrt/dynrt.h"

#include <string>

struct dynrt_status_t {
  dynrt_status_code_t code;
  std::string message;
};

namespace dynrt {
/// Returns a new error status; never fails (a failed allocation becomes a
/// static out-of-memory status).
dynrt_status_t *makeStatus(dynrt_status_code_t code, std::string message);
} // namespace dynrt

#endif // DYNRT_STATUS_INTERNAL_H
