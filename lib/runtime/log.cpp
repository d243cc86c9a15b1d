//===- log.cpp - dynrt_set_log_callback and the stderr sink ---------------===//
#include "log.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace {
struct Sink {
  std::recursive_mutex mu; // a callback may log or set the callback itself
  dynrt_log_callback_t callback = nullptr;
  void *user = nullptr;
  bool toStderr = false;
};

/// The lowest level that goes anywhere; checked without the lock.
std::atomic<int> gMinLevel{DYNRT_LOG_OFF};

/// DYNRT_LOG's level, or OFF.
int environmentLevel() {
  const char *v = std::getenv("DYNRT_LOG");
  if (!v)
    return DYNRT_LOG_OFF;
  static const char *const names[] = {"debug", "info", "warning", "error"};
  for (int i = 0; i < 4; ++i)
    if (std::strcmp(v, names[i]) == 0)
      return i;
  std::fprintf(stderr,
               "dynrt: DYNRT_LOG='%s' is not debug, info, warning or error; "
               "not logging\n",
               v);
  return DYNRT_LOG_OFF;
}

Sink &sink() {
  // Leaked: messages may be logged from atexit handlers, after static
  // destructors ran.
  static Sink *s = [] {
    auto *made = new Sink;
    int level = environmentLevel();
    made->toStderr = level != DYNRT_LOG_OFF;
    gMinLevel.store(level);
    return made;
  }();
  return *s;
}

const char *levelName(dynrt_log_level_t level) {
  switch (level) {
  case DYNRT_LOG_DEBUG:
    return "debug";
  case DYNRT_LOG_INFO:
    return "info";
  case DYNRT_LOG_WARNING:
    return "warning";
  default:
    return "error";
  }
}
} // namespace

bool dynrt::logEnabled(dynrt_log_level_t level) {
  sink(); // reads DYNRT_LOG once
  return level >= gMinLevel.load(std::memory_order_relaxed);
}

void dynrt::logMessage(dynrt_log_level_t level, const std::string &message) {
  Sink &s = sink();
  std::lock_guard<std::recursive_mutex> lock(s.mu);
  if (level < gMinLevel.load(std::memory_order_relaxed))
    return;
  if (s.callback)
    s.callback(s.user, level, message.c_str());
  else if (s.toStderr)
    std::fprintf(stderr, "dynrt %s: %s\n", levelName(level), message.c_str());
}

extern "C" void dynrt_set_log_callback(dynrt_log_callback_t callback,
                                       void *user,
                                       dynrt_log_level_t min_level) {
  Sink &s = sink();
  std::lock_guard<std::recursive_mutex> lock(s.mu);
  s.callback = callback;
  s.user = user;
  s.toStderr = false;
  int level = min_level < DYNRT_LOG_DEBUG || min_level > DYNRT_LOG_OFF
                  ? DYNRT_LOG_OFF
                  : int(min_level);
  gMinLevel.store(callback ? level : DYNRT_LOG_OFF);
}
