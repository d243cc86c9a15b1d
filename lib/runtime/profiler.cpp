//===- profiler.cpp - dynrt_profile_start/stop, kernel hooks, trace file --===//
#include "profiler.h"
#include "log.h"
#include "model_internal.h"
#include "status.h"

#include <nlohmann/json.hpp>

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <set>
#include <vector>

namespace {
using dynrt::makeStatus;
using Clock = std::chrono::steady_clock;

struct Event {
  std::string name, category, args;
  double ts, dur; // microseconds since the recording started
  long tid;
};

struct Session {
  std::mutex mu;
  std::string path; // while recording
  std::vector<Event> events;
  size_t dropped = 0;               // spans past kMaxEvents
  std::set<dynrt_model_t *> models; // every loaded model, recording or not
};

std::atomic<bool> gRecording{false};
/// When the recording started; spans read it without the lock.
std::atomic<Clock::rep> gStart{0};

Session &session() {
  // Leaked: DYNOC_PROFILE's trace is written by an atexit handler, which may
  // run after static destructors.
  static Session *s = new Session;
  return *s;
}

double now() {
  Clock::duration since =
      Clock::now().time_since_epoch() - Clock::duration(gStart.load());
  return std::chrono::duration<double, std::micro>(since).count();
}

long threadId() {
  thread_local long id = syscall(SYS_gettid);
  return id;
}

/// Spans kept per recording (about 200 bytes each): a long run of a small
/// model is cut off rather than filling memory; the trace says how many were
/// dropped.
constexpr size_t kMaxEvents = 2'000'000;

void record(Event e) {
  Session &s = session();
  std::lock_guard<std::mutex> lock(s.mu);
  if (!gRecording.load(std::memory_order_relaxed))
    return;
  if (s.events.size() < kMaxEvents)
    s.events.push_back(std::move(e));
  else if (s.dropped++ == 0 && dynrt::logEnabled(DYNRT_LOG_WARNING))
    dynrt::logMessage(DYNRT_LOG_WARNING, "the profile '" + s.path +
                                             "' is full at " +
                                             std::to_string(kMaxEvents) +
                                             " spans; later spans are dropped");
}

/// The graph this thread runs, for the kernel hooks.
struct Running {
  const dynrt_model_t *model = nullptr;
  const dynrt::GraphSpec *graph = nullptr;
  /// Kernels begun and not ended: (index, start). A kernel that failed
  /// returns before its end; the next graph starts afresh.
  std::vector<std::pair<int, double>> open;
};
thread_local Running tRunning;

void hookBegin(void *, int kernel, void *) {
  tRunning.open.emplace_back(kernel, now());
}

void hookEnd(void *, int kernel, void *stream) {
  const Running &r = tRunning;
  if (!r.model)
    return;
  // On a device the kernels run asynchronously: wait for this one.
  if (!r.model->device.isHost())
    if (dynrt_status_t *s = r.model->device.sync(stream))
      dynrt_status_free(s);
  double end = now();
  auto it = std::find_if(r.open.rbegin(), r.open.rend(),
                         [&](const auto &o) { return o.first == kernel; });
  if (it == r.open.rend())
    return;
  double start = it->second;
  tRunning.open.erase(std::next(it).base(), tRunning.open.end());
  const auto &kernels = r.graph->kernels;
  if (kernel >= 0 && size_t(kernel) < kernels.size()) {
    const dynrt::KernelSpec &k = kernels[kernel];
    record({k.name, k.category, k.args, start, end - start, threadId()});
  } else {
    record({"kernel " + std::to_string(kernel), "kernel", "", start,
            end - start, threadId()});
  }
}

const dynoc_profiler_hooks kHooks = {nullptr, hookBegin, hookEnd};

void setHooks(dynrt_model_t &m, bool on) {
  if (m.setProfiler)
    m.setProfiler(on ? &kHooks : nullptr);
}

std::string directoryOf(const std::string &path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? "."
         : slash == 0               ? "/"
                                    : path.substr(0, slash);
}

std::string quoted(const std::string &s) {
  return nlohmann::json(s).dump(-1, ' ', false,
                                nlohmann::json::error_handler_t::replace);
}

/// Writes `events` as Chrome trace JSON ("X" complete events in
/// microseconds; docs/runtime.md), through a temporary file.
dynrt_status_t *writeTrace(const std::string &path, std::vector<Event> events,
                           size_t dropped) {
  // Parents before their children: by thread, start, then longest first.
  std::sort(events.begin(), events.end(), [](const Event &a, const Event &b) {
    if (a.tid != b.tid)
      return a.tid < b.tid;
    if (a.ts != b.ts)
      return a.ts < b.ts;
    return a.dur > b.dur;
  });
  std::string tmp = path + ".tmp" + std::to_string(getpid());
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f)
      return makeStatus(DYNRT_NOT_FOUND,
                        "cannot write the profile '" + path + "'");
    long pid = getpid();
    f << "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"producer\":"
         "\"libdynrt\",\"dropped_spans\":"
      << dropped << "},\"traceEvents\":[\n";
    f << "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":" << pid
      << ",\"tid\":0,\"args\":{\"name\":\"dynrt\"}}";
    char number[64];
    for (const Event &e : events) {
      f << ",\n{\"name\":" << quoted(e.name)
        << ",\"cat\":" << quoted(e.category) << ",\"ph\":\"X\"";
      std::snprintf(number, sizeof number, ",\"ts\":%.3f,\"dur\":%.3f", e.ts,
                    e.dur);
      f << number << ",\"pid\":" << pid << ",\"tid\":" << e.tid;
      if (!e.args.empty())
        f << ",\"args\":" << e.args;
      f << "}";
    }
    f << "\n]}\n";
    f.close();
    if (!f) {
      std::remove(tmp.c_str());
      return makeStatus(DYNRT_RESOURCE_EXHAUSTED,
                        "cannot write the profile '" + path + "'");
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    return makeStatus(DYNRT_NOT_FOUND,
                      "cannot write the profile '" + path + "'");
  }
  if (dynrt::logEnabled(DYNRT_LOG_INFO))
    dynrt::logMessage(DYNRT_LOG_INFO, "wrote the profile '" + path + "' (" +
                                          std::to_string(events.size()) +
                                          " spans)");
  return nullptr;
}

dynrt_status_t *start(const std::string &path) {
  Session &s = session();
  std::lock_guard<std::mutex> lock(s.mu);
  if (gRecording.load())
    return makeStatus(DYNRT_INVALID_ARGUMENT,
                      "a profile is already being recorded to '" + s.path +
                          "'");
  if (path.empty() || access(directoryOf(path).c_str(), W_OK) != 0)
    return makeStatus(DYNRT_NOT_FOUND,
                      "cannot record a profile to '" + path +
                          "': its directory does not exist or is not "
                          "writable");
  s.path = path;
  s.events.clear();
  s.dropped = 0;
  gStart.store(Clock::now().time_since_epoch().count());
  gRecording.store(true);
  for (dynrt_model_t *m : s.models)
    setHooks(*m, true);
  if (dynrt::logEnabled(DYNRT_LOG_INFO))
    dynrt::logMessage(DYNRT_LOG_INFO, "recording a profile to '" + path + "'");
  return nullptr;
}

dynrt_status_t *stop() {
  Session &s = session();
  std::vector<Event> events;
  std::string path;
  size_t dropped;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    if (!gRecording.load())
      return makeStatus(DYNRT_INVALID_ARGUMENT,
                        "dynrt_profile_stop: no profile is being recorded");
    gRecording.store(false);
    for (dynrt_model_t *m : s.models)
      setHooks(*m, false);
    events.swap(s.events);
    path.swap(s.path);
    dropped = s.dropped;
  }
  return writeTrace(path, std::move(events), dropped);
}

/// DYNOC_PROFILE's recording, written at exit.
void writeAtExit() {
  if (!gRecording.load())
    return;
  if (dynrt_status_t *st = stop()) {
    std::string message = dynrt_status_message(st);
    dynrt_status_free(st);
    // No caller is left to take a status: say it.
    std::fprintf(stderr, "dynrt: DYNOC_PROFILE: %s\n", message.c_str());
  }
}

void startFromEnvironment() {
  static std::once_flag once;
  std::call_once(once, [] {
    const char *path = std::getenv("DYNOC_PROFILE");
    if (!path || !*path)
      return;
    if (dynrt_status_t *st = start(path)) {
      std::fprintf(stderr, "dynrt: DYNOC_PROFILE: %s\n",
                   dynrt_status_message(st));
      dynrt_status_free(st);
      return;
    }
    std::atexit(writeAtExit);
  });
}
} // namespace

bool dynrt::profile::active() {
  return gRecording.load(std::memory_order_relaxed);
}

void dynrt::profile::attach(dynrt_model_t &m) {
  startFromEnvironment();
  Session &s = session();
  std::lock_guard<std::mutex> lock(s.mu);
  s.models.insert(&m);
  setHooks(m, gRecording.load());
}

void dynrt::profile::detach(dynrt_model_t &m) {
  Session &s = session();
  std::lock_guard<std::mutex> lock(s.mu);
  s.models.erase(&m);
}

dynrt::profile::Span::Span(const char *category, std::string name,
                           std::string args)
    : on_(active()), category_(category) {
  if (!on_)
    return;
  name_ = std::move(name);
  args_ = std::move(args);
  start_ = now();
}

dynrt::profile::Span::~Span() {
  if (on_)
    record({std::move(name_), category_, std::move(args_), start_,
            now() - start_, threadId()});
}

dynrt::profile::GraphScope::GraphScope(const dynrt_model_t &m,
                                       const GraphSpec &spec, void *stream)
    : on_(active()) {
  if (!on_)
    return;
  tRunning.model = &m;
  tRunning.graph = &spec;
  tRunning.open.clear();
  if (!m.device.isHost())
    if (dynrt_status_t *s = m.device.sync(stream))
      dynrt_status_free(s);
}

dynrt::profile::GraphScope::~GraphScope() {
  if (on_)
    tRunning = Running{};
}

extern "C" dynrt_status_t *dynrt_profile_start(const char *path) {
  return dynrt::guarded("dynrt_profile_start", [&]() -> dynrt_status_t * {
    if (!path)
      return makeStatus(DYNRT_INVALID_ARGUMENT,
                        "dynrt_profile_start: null argument");
    return start(path);
  });
}

extern "C" dynrt_status_t *dynrt_profile_stop(void) {
  return dynrt::guarded("dynrt_profile_stop", [] { return stop(); });
}
