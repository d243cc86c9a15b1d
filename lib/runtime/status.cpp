//===- status.cpp - dynrt_status_t ----------------------------------------===//
#include "status.h"

#include "dynrt/model_abi.h"

#include <new>

namespace {
// Handed out when the status itself cannot be allocated; never freed.
dynrt_status_t kOutOfMemory{DYNRT_RESOURCE_EXHAUSTED, "out of memory"};
} // namespace

dynrt_status_t *dynrt::makeStatus(dynrt_status_code_t code,
                                  std::string message) {
  try {
    return new dynrt_status_t{code, std::move(message)};
  } catch (...) {
    return &kOutOfMemory;
  }
}

dynrt_status_t *dynrt::hostGraphFailed(const std::string &graph, int rc) {
  if (rc == DYNOC_RUN_DIVISION_BY_ZERO)
    return makeStatus(DYNRT_INVALID_ARGUMENT, "ZeroDivisionError: graph '" +
                                                  graph +
                                                  "' divided an integer by zero");
  return makeStatus(DYNRT_INTERNAL, "graph '" + graph + "' failed with code " +
                                        std::to_string(rc));
}

extern "C" dynrt_status_code_t dynrt_status_code(const dynrt_status_t *status) {
  return status ? status->code : DYNRT_OK;
}

extern "C" const char *dynrt_status_message(const dynrt_status_t *status) {
  return status ? status->message.c_str() : "ok";
}

extern "C" void dynrt_status_free(dynrt_status_t *status) {
  if (status != &kOutOfMemory)
    delete status;
}
