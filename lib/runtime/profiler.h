//===- profiler.h - recording a trace of model runs (internal) --*- C++ -*-===//
//
// dynrt_profile_start/stop and DYNOC_PROFILE (dynrt.h). While a trace is
// recorded, every loaded model's kernel hooks (model_abi.h) point at the
// profiler, which turns each begin/end pair into a span named from the
// graph's manifest "kernels"; the runtime adds spans of its own (a load, a
// run). Spans are kept in memory and written as Chrome trace JSON, which
// Perfetto and chrome://tracing open.
//
//===----------------------------------------------------------------------===//
#ifndef DYNRT_PROFILER_H
#define DYNRT_PROFILER_H

#include "dynrt/dynrt.h"
#include "dynrt/manifest.h"

#include <string>

struct dynrt_model_t;

namespace dynrt {
namespace profile {

/// Whether a trace is being recorded (cheap; no lock).
bool active();

/// A model's .so is open: from now on its hooks follow the recording. The
/// first call starts the recording DYNOC_PROFILE asks for.
void attach(dynrt_model_t &m);
/// The model is going away (before dlclose).
void detach(dynrt_model_t &m);

/// A span of the runtime's own on this thread, from construction to
/// destruction; a no-op unless recording. `args` is a JSON object or empty.
class Span {
public:
  Span(const char *category, std::string name, std::string args = "");
  ~Span();
  Span(const Span &) = delete;
  Span &operator=(const Span &) = delete;

private:
  bool on_;
  double start_ = 0;
  const char *category_;
  std::string name_, args_;
};

/// While graph `spec` of `m` runs on this thread (its kernels' spans are
/// named from `spec`); for a device model on `stream`, which it waits for
/// first, so that the first kernel's span starts when the device is idle.
class GraphScope {
public:
  GraphScope(const dynrt_model_t &m, const GraphSpec &spec, void *stream);
  ~GraphScope();
  GraphScope(const GraphScope &) = delete;
  GraphScope &operator=(const GraphScope &) = delete;

private:
  bool on_;
};

} // namespace profile
} // namespace dynrt

#endif // DYNRT_PROFILER_H
