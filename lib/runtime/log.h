//===- log.h - libdynrt's log messages (internal) ---------------*- C++ -*-===//
//
// libdynrt has no logging library: messages go to the caller's callback
// (dynrt_set_log_callback) or, with DYNRT_LOG set and no callback, to
// stderr. Build a message only when logEnabled(level) says it goes anywhere.
//
//===----------------------------------------------------------------------===//
#ifndef DYNRT_LOG_INTERNAL_H
#define DYNRT_LOG_INTERNAL_H

#include "dynrt/dynrt.h"

#include <string>

namespace dynrt {
bool logEnabled(dynrt_log_level_t level);
void logMessage(dynrt_log_level_t level, const std::string &message);
} // namespace dynrt

#endif // DYNRT_LOG_INTERNAL_H
