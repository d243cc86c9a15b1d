//===- nccl_communicator.cpp - a dynrt_communicator_t over NCCL -----------===//
//
// libdynrt's own communicator for CUDA models: NCCL (libnccl.so.2, the
// nvidia-nccl-cu13 wheel's, which torch loads too) and the CUDA runtime
// (libcudart.so.13) are loaded at run time, so libdynrt links neither and a
// machine without them only fails when a communicator is made. Collectives
// run on a stream of the communicator's own: it waits for an event recorded
// on the model's stream, and the model's stream waits for an event recorded
// after the collective (no host synchronization). A watchdog thread bounds
// every collective by the timeout: one that has not completed by then aborts
// the NCCL communicator (its kernels return) and every later call fails with
// a message naming it, rather than a hang.
//
// The few NCCL and CUDA runtime declarations are spelled here (nccl.h's
// stable C API, cuda_runtime_api.h's), not included: their libraries come at
// run time from wherever torch put them.
//
//===----------------------------------------------------------------------===//
#include "status.h"

#include <dlfcn.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <string>
#include <thread>

using dynrt::makeStatus;

namespace {
// --- nccl.h ---
using ncclComm_t = struct ncclComm *;
struct ncclUniqueId {
  char internal[DYNRT_NCCL_UNIQUE_ID_BYTES];
};
using ncclResult_t = int;
constexpr ncclResult_t ncclSuccess = 0, ncclInProgress = 7;
enum ncclDataType {
  ncclInt8 = 0,
  ncclUint8 = 1,
  ncclInt32 = 2,
  ncclInt64 = 4,
  ncclFloat16 = 6,
  ncclFloat32 = 7,
  ncclFloat64 = 8,
  ncclBfloat16 = 9
};
enum ncclRedOp {
  ncclSum = 0,
  ncclProd = 1,
  ncclMax = 2,
  ncclMin = 3,
  ncclAvg = 4
};
// ncclConfig_t as NCCL 2.14 laid it out; later versions read an older
// layout by its `version`.
struct ncclConfig {
  size_t size = sizeof(ncclConfig);
  unsigned int magic = 0xcafebeef;
  unsigned int version = 21400; // NCCL_VERSION(2, 14, 0)
  int blocking = 0;             // initialization returns at once
  int cgaClusterSize = INT32_MIN, minCTAs = INT32_MIN, maxCTAs = INT32_MIN;
  const char *netName = nullptr;
  int splitShare = INT32_MIN;
};
// --- cuda_runtime_api.h ---
using cudaStream_t = void *;
using cudaEvent_t = void *;
using cudaError_t = int;
constexpr cudaError_t cudaSuccess = 0, cudaErrorNotReady = 600;
constexpr unsigned cudaStreamNonBlocking = 1, cudaEventDisableTiming = 2;
constexpr int cudaStreamCaptureStatusNone = 0;

struct Libraries {
  void *nccl = nullptr, *cudart = nullptr;
  std::string error;
  ncclResult_t (*getUniqueId)(ncclUniqueId *);
  ncclResult_t (*commInitRankConfig)(ncclComm_t *, int, ncclUniqueId, int,
                                     ncclConfig *);
  ncclResult_t (*commGetAsyncError)(ncclComm_t, ncclResult_t *);
  ncclResult_t (*commAbort)(ncclComm_t);
  ncclResult_t (*commDestroy)(ncclComm_t);
  const char *(*getErrorString)(ncclResult_t);
  const char *(*getLastError)(ncclComm_t);
  ncclResult_t (*allReduce)(const void *, void *, size_t, int, int, ncclComm_t,
                            cudaStream_t);
  ncclResult_t (*allGather)(const void *, void *, size_t, int, ncclComm_t,
                            cudaStream_t);
  ncclResult_t (*reduceScatter)(const void *, void *, size_t, int, int,
                                ncclComm_t, cudaStream_t);
  ncclResult_t (*broadcast)(const void *, void *, size_t, int, int, ncclComm_t,
                            cudaStream_t);
  ncclResult_t (*send)(const void *, size_t, int, int, ncclComm_t,
                       cudaStream_t);
  ncclResult_t (*recv)(void *, size_t, int, int, ncclComm_t, cudaStream_t);
  ncclResult_t (*groupStart)();
  ncclResult_t (*groupEnd)();
  cudaError_t (*setDevice)(int);
  cudaError_t (*getDevice)(int *);
  cudaError_t (*streamCreateWithFlags)(cudaStream_t *, unsigned);
  cudaError_t (*streamDestroy)(cudaStream_t);
  cudaError_t (*streamWaitEvent)(cudaStream_t, cudaEvent_t, unsigned);
  cudaError_t (*eventCreateWithFlags)(cudaEvent_t *, unsigned);
  cudaError_t (*eventDestroy)(cudaEvent_t);
  cudaError_t (*eventRecord)(cudaEvent_t, cudaStream_t);
  cudaError_t (*eventQuery)(cudaEvent_t);
  cudaError_t (*eventSynchronize)(cudaEvent_t);
  cudaError_t (*streamIsCapturing)(cudaStream_t, int *);
  const char *(*cudaErrorString)(cudaError_t);
};

template <class F> bool bindSymbol(void *lib, const char *name, F &fn) {
  fn = reinterpret_cast<F>(dlsym(lib, name));
  return fn != nullptr;
}

/// NCCL and the CUDA runtime, loaded once per process ("" error: loaded).
const Libraries &libraries() {
  static const Libraries libs = [] {
    Libraries l{};
    // Already in the process when torch is; else the library path's.
    for (auto [lib, name] : {std::pair{&l.nccl, "libnccl.so.2"},
                             std::pair{&l.cudart, "libcudart.so.13"}}) {
      *lib = dlopen(name, RTLD_NOW | RTLD_GLOBAL);
      if (!*lib) {
        const char *why = dlerror();
        l.error = std::string("cannot load ") + name + " (" +
                  (why ? why : "not found") +
                  "): put the nvidia-nccl-cu13 wheel's and the CUDA "
                  "runtime's lib directories on LD_LIBRARY_PATH";
        return l;
      }
    }
    bool ok =
        bindSymbol(l.nccl, "ncclGetUniqueId", l.getUniqueId) &&
        bindSymbol(l.nccl, "ncclCommInitRankConfig", l.commInitRankConfig) &&
        bindSymbol(l.nccl, "ncclCommGetAsyncError", l.commGetAsyncError) &&
        bindSymbol(l.nccl, "ncclCommAbort", l.commAbort) &&
        bindSymbol(l.nccl, "ncclCommDestroy", l.commDestroy) &&
        bindSymbol(l.nccl, "ncclGetErrorString", l.getErrorString) &&
        bindSymbol(l.nccl, "ncclAllReduce", l.allReduce) &&
        bindSymbol(l.nccl, "ncclAllGather", l.allGather) &&
        bindSymbol(l.nccl, "ncclReduceScatter", l.reduceScatter) &&
        bindSymbol(l.nccl, "ncclBroadcast", l.broadcast) &&
        bindSymbol(l.nccl, "ncclSend", l.send) &&
        bindSymbol(l.nccl, "ncclRecv", l.recv) &&
        bindSymbol(l.nccl, "ncclGroupStart", l.groupStart) &&
        bindSymbol(l.nccl, "ncclGroupEnd", l.groupEnd) &&
        bindSymbol(l.cudart, "cudaSetDevice", l.setDevice) &&
        bindSymbol(l.cudart, "cudaGetDevice", l.getDevice) &&
        bindSymbol(l.cudart, "cudaStreamCreateWithFlags",
                   l.streamCreateWithFlags) &&
        bindSymbol(l.cudart, "cudaStreamDestroy", l.streamDestroy) &&
        bindSymbol(l.cudart, "cudaStreamWaitEvent", l.streamWaitEvent) &&
        bindSymbol(l.cudart, "cudaEventCreateWithFlags",
                   l.eventCreateWithFlags) &&
        bindSymbol(l.cudart, "cudaEventDestroy", l.eventDestroy) &&
        bindSymbol(l.cudart, "cudaEventRecord", l.eventRecord) &&
        bindSymbol(l.cudart, "cudaEventQuery", l.eventQuery) &&
        bindSymbol(l.cudart, "cudaEventSynchronize", l.eventSynchronize) &&
        bindSymbol(l.cudart, "cudaStreamIsCapturing", l.streamIsCapturing) &&
        bindSymbol(l.cudart, "cudaGetErrorString", l.cudaErrorString);
    if (!ok) {
      const char *why = dlerror();
      l.error = std::string("libnccl.so.2 or libcudart.so.13 lacks a "
                            "function dynrt needs: ") +
                (why ? why : "?");
    }
    // Newer NCCLs say more about a failure than its code.
    l.getLastError = reinterpret_cast<const char *(*)(ncclComm_t)>(
        dlsym(l.nccl, "ncclGetLastError"));
    return l;
  }();
  return libs;
}

int ncclTypeOf(const DLDataType &t) {
  if (t.code == kDLFloat)
    return t.bits == 32   ? ncclFloat32
           : t.bits == 64 ? ncclFloat64
           : t.bits == 16 ? ncclFloat16
                          : -1;
  if (t.code == kDLBfloat && t.bits == 16)
    return ncclBfloat16;
  if (t.code == kDLInt)
    return t.bits == 64   ? ncclInt64
           : t.bits == 32 ? ncclInt32
           : t.bits == 8  ? ncclInt8
                          : -1;
  if ((t.code == kDLUInt || t.code == 6 /* kDLBool */) && t.bits == 8)
    return ncclUint8;
  return -1;
}

int ncclOpOf(dynrt_reduce_op_t op) {
  switch (op) {
  case DYNRT_REDUCE_SUM:
    return ncclSum;
  case DYNRT_REDUCE_AVG:
    return ncclAvg;
  case DYNRT_REDUCE_PRODUCT:
    return ncclProd;
  case DYNRT_REDUCE_MIN:
    return ncclMin;
  case DYNRT_REDUCE_MAX:
    return ncclMax;
  }
  return -1;
}

size_t countOf(const DLTensor *t) {
  size_t n = 1;
  for (int i = 0; i < t->ndim; ++i)
    n *= size_t(t->shape[i]);
  return n;
}

void *dataOf(const DLTensor *t) {
  return static_cast<char *>(t->data) + t->byte_offset;
}

/// One collective in flight: the event recorded after it on the
/// communicator's stream, when it started and what it was.
struct Work {
  cudaEvent_t done = nullptr;
  std::chrono::steady_clock::time_point started;
  std::string what;
};

class NcclCommunicator {
public:
  dynrt_communicator_t table{};

  NcclCommunicator(std::string group, int size, int rank, int device,
                   int timeoutMs)
      : group_(std::move(group)), size_(size), rank_(rank), device_(device),
        timeoutMs_(timeoutMs) {}
  ~NcclCommunicator() {
    stopWatchdog();
    const Libraries &l = libraries();
    if (comm_)
      (failed_.load() ? l.commAbort : l.commDestroy)(comm_);
    for (cudaEvent_t e : freeEvents_)
      l.eventDestroy(e);
    for (const Replay &r : replays_)
      l.eventDestroy(r.done);
    if (ready_)
      l.eventDestroy(ready_);
    if (stream_)
      l.streamDestroy(stream_);
  }

  /// Joins the communicator of `id`, bounded by the timeout.
  dynrt_status_t *init(const ncclUniqueId &id) {
    const Libraries &l = libraries();
    // The caller's current device is its own: set back on the way out.
    int callers = -1;
    l.getDevice(&callers);
    struct Restore {
      const Libraries &l;
      int device;
      ~Restore() {
        if (device >= 0)
          l.setDevice(device);
      }
    } restore{l, callers};
    if (cudaError_t e = l.setDevice(device_))
      return cudaFailure("cudaSetDevice", e);
    if (cudaError_t e =
            l.streamCreateWithFlags(&stream_, cudaStreamNonBlocking))
      return cudaFailure("cudaStreamCreateWithFlags", e);
    if (cudaError_t e = l.eventCreateWithFlags(&ready_, cudaEventDisableTiming))
      return cudaFailure("cudaEventCreateWithFlags", e);
    ncclConfig config;
    ncclResult_t r = l.commInitRankConfig(&comm_, size_, id, rank_, &config);
    auto deadline = std::chrono::steady_clock::now() +
                    std::chrono::milliseconds(timeoutMs_);
    while (r == ncclSuccess || r == ncclInProgress) {
      ncclResult_t state = ncclSuccess;
      l.commGetAsyncError(comm_, &state);
      if (state != ncclInProgress) {
        r = state;
        break;
      }
      if (timeoutMs_ > 0 && std::chrono::steady_clock::now() > deadline) {
        l.commAbort(comm_);
        comm_ = nullptr;
        return makeStatus(DYNRT_DEADLINE_EXCEEDED,
                          "NCCL communicator for process group '" + group_ +
                              "': rank " + std::to_string(rank_) + " of " +
                              std::to_string(size_) +
                              " was not joined by every rank within " +
                              std::to_string(timeoutMs_) + " ms");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    if (r != ncclSuccess)
      return makeStatus(DYNRT_INTERNAL,
                        "NCCL communicator for process group '" + group_ +
                            "': " + ncclText(r));
    watchdog_ = std::thread([this] { watch(); });
    return nullptr;
  }

  int groupSize(const char *group, int *size, int *rank) {
    if (group_ != group)
      return fail("this NCCL communicator is process group '" + group_ +
                  "', not '" + group + "'");
    *size = size_;
    *rank = rank_;
    return 0;
  }

  /// Issues `issue(stream)` on the communicator's stream after the model's
  /// queued work; *work becomes its completion.
  template <class Issue>
  int start(const char *what, void *modelStream, void **work, Issue issue) {
    const Libraries &l = libraries();
    *work = nullptr;
    // Under the lock: the watchdog aborts the NCCL communicator under it.
    std::lock_guard<std::mutex> lock(mutex_);
    if (failed_.load())
      return fail(failure_);
    if (cudaError_t e = l.eventRecord(ready_, modelStream))
      return fail(cudaText("cudaEventRecord", e));
    if (cudaError_t e = l.streamWaitEvent(stream_, ready_, 0))
      return fail(cudaText("cudaStreamWaitEvent", e));
    ncclResult_t r = issue(stream_);
    // A non-blocking communicator may still be queueing the collective: its
    // first one with a peer connects to that peer, which never ends when the
    // peer never comes. Bounded by the timeout, as the collective itself is
    // by the watchdog (which waits for this lock meanwhile).
    auto issuing = std::chrono::steady_clock::now();
    while (r == ncclInProgress) {
      if (timeoutMs_ > 0 && std::chrono::steady_clock::now() - issuing >
                                std::chrono::milliseconds(timeoutMs_)) {
        failure_ = "NCCL communicator aborted: " + std::string(what) +
                   " over process group '" + group_ +
                   "' did not complete within " + std::to_string(timeoutMs_) +
                   " ms (it could not be issued: a rank that died or issued "
                   "other collectives?)";
        failed_.store(true);
        l.commAbort(comm_);
        comm_ = nullptr;
        return fail(failure_);
      }
      std::this_thread::yield();
      l.commGetAsyncError(comm_, &r);
    }
    if (r != ncclSuccess)
      return fail(std::string(what) + ": " + ncclText(r));
    auto w = std::make_unique<Work>();
    w->done = takeEvent();
    if (!w->done)
      return fail("cudaEventCreateWithFlags failed");
    if (cudaError_t e = l.eventRecord(w->done, stream_))
      return fail(cudaText("cudaEventRecord", e));
    w->started = std::chrono::steady_clock::now();
    w->what = std::string(what) + " over process group '" + group_ + "'";
    // Issued into a CUDA graph being captured: nothing ran, and the event is
    // a node of the capture that the watchdog must not query. The replays
    // are watched instead (graphReplay).
    int capturing = cudaStreamCaptureStatusNone;
    if (modelStream &&
        l.streamIsCapturing(modelStream, &capturing) != cudaSuccess)
      capturing = cudaStreamCaptureStatusNone;
    if (capturing == cudaStreamCaptureStatusNone)
      inFlight_.push_back(w.get());
    *work = w.release();
    return 0;
  }

  int wait(void *handle, void *modelStream) {
    const Libraries &l = libraries();
    std::unique_ptr<Work> w(static_cast<Work *>(handle));
    int rc = 0;
    if (modelStream) {
      if (cudaError_t e = l.streamWaitEvent(modelStream, w->done, 0))
        rc = fail(cudaText("cudaStreamWaitEvent", e));
    } else {
      // A caller without a stream: done on the host, bounded by the watchdog.
      if (cudaError_t e = l.eventSynchronize(w->done))
        rc = fail(cudaText("cudaEventSynchronize", e));
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      // The watchdog forgets it once completed; a wait before that leaves
      // the event with it, and it recycles the event.
      for (Work *&p : inFlight_)
        if (p == w.get())
          p = nullptr;
    }
    if (rc == 0 && failed_.load())
      rc = fail(error());
    recycle(w->done);
    return rc;
  }

  /// A replay of a CUDA graph holding this communicator's collectives: before
  /// it is queued, refused once the communicator failed (its NCCL resources
  /// are gone); after, watched until done, as a collective is.
  int graphReplay(void *stream, int queued) {
    const Libraries &l = libraries();
    std::lock_guard<std::mutex> lock(mutex_);
    if (failed_.load())
      return fail(failure_);
    if (!queued)
      return 0;
    cudaEvent_t e = takeEvent();
    if (!e)
      return fail("cudaEventCreateWithFlags failed");
    if (cudaError_t err = l.eventRecord(e, stream)) {
      freeEvents_.push_back(e);
      return fail(cudaText("cudaEventRecord", err));
    }
    replays_.push_back({e, std::chrono::steady_clock::now()});
    return 0;
  }

  int allReduce(const char *group, DLTensor *t, dynrt_reduce_op_t op,
                void *stream, void **work) {
    int type = ncclTypeOf(t->dtype), red = ncclOpOf(op);
    if (int rc = checkGroup(group, type))
      return rc;
    if (red < 0)
      return fail("all_reduce: reduce op " + std::to_string(int(op)) +
                  " has no NCCL form");
    return start("all_reduce", stream, work, [&](cudaStream_t s) {
      return libraries().allReduce(dataOf(t), dataOf(t), countOf(t), type, red,
                                   comm_, s);
    });
  }
  int allGather(const char *group, const DLTensor *in, DLTensor *out,
                void *stream, void **work) {
    int type = ncclTypeOf(in->dtype);
    if (int rc = checkGroup(group, type))
      return rc;
    return start("all_gather", stream, work, [&](cudaStream_t s) {
      return libraries().allGather(dataOf(in), dataOf(out), countOf(in), type,
                                   comm_, s);
    });
  }
  int reduceScatter(const char *group, const DLTensor *in, DLTensor *out,
                    dynrt_reduce_op_t op, void *stream, void **work) {
    int type = ncclTypeOf(in->dtype), red = ncclOpOf(op);
    if (int rc = checkGroup(group, type))
      return rc;
    if (red < 0)
      return fail("reduce_scatter: reduce op has no NCCL form");
    return start("reduce_scatter", stream, work, [&](cudaStream_t s) {
      return libraries().reduceScatter(dataOf(in), dataOf(out), countOf(out),
                                       type, red, comm_, s);
    });
  }
  int broadcast(const char *group, DLTensor *t, int src, void *stream,
                void **work) {
    int type = ncclTypeOf(t->dtype);
    if (int rc = checkGroup(group, type))
      return rc;
    return start("broadcast", stream, work, [&](cudaStream_t s) {
      return libraries().broadcast(dataOf(t), dataOf(t), countOf(t), type, src,
                                   comm_, s);
    });
  }

  /// A send to and a receive from every rank, in one NCCL group.
  int allToAll(const char *group, const DLTensor *in, DLTensor *out,
               const int64_t *inCounts, const int64_t *outCounts, void *stream,
               void **work) {
    int type = ncclTypeOf(in->dtype);
    if (int rc = checkGroup(group, type))
      return rc;
    size_t item = (in->dtype.bits + 7) / 8;
    return start("all_to_all_single", stream, work, [&](cudaStream_t s) {
      const Libraries &l = libraries();
      auto *src = static_cast<const char *>(dataOf(in));
      auto *dst = static_cast<char *>(dataOf(out));
      ncclResult_t r = l.groupStart();
      size_t inAt = 0, outAt = 0;
      for (int peer = 0; peer < size_ && r == ncclSuccess; ++peer) {
        r = l.send(src + inAt * item, size_t(inCounts[peer]), type, peer, comm_,
                   s);
        if (r == ncclSuccess)
          r = l.recv(dst + outAt * item, size_t(outCounts[peer]), type, peer,
                     comm_, s);
        inAt += size_t(inCounts[peer]);
        outAt += size_t(outCounts[peer]);
      }
      ncclResult_t end = l.groupEnd();
      return r != ncclSuccess ? r : end;
    });
  }

  const char *lastError() const { return lastError_.c_str(); }

private:
  std::string group_;
  int size_, rank_, device_, timeoutMs_;
  ncclComm_t comm_ = nullptr;
  cudaStream_t stream_ = nullptr;
  cudaEvent_t ready_ = nullptr;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Work *> inFlight_; // issue order; null: waited for
  struct Replay {
    cudaEvent_t done;
    std::chrono::steady_clock::time_point started;
  };
  std::deque<Replay> replays_;         // CUDA graph replays queued, in order
  std::deque<cudaEvent_t> freeEvents_; // recycled (guarded by mutex_)
  std::atomic<bool> failed_{false}, stop_{false};
  bool aborting_ = false; // the watchdog is in ncclCommAbort (mutex_)
  std::string failure_; // set once, before failed_
  std::thread watchdog_;
  thread_local static std::string lastError_;

  std::string ncclText(ncclResult_t r) const {
    const Libraries &l = libraries();
    std::string text = l.getErrorString(r);
    if (l.getLastError && comm_)
      if (const char *more = l.getLastError(comm_); more && *more)
        text += std::string(" (") + more + ")";
    return text;
  }
  static std::string cudaText(const char *call, cudaError_t e) {
    return std::string(call) + ": " + libraries().cudaErrorString(e);
  }
  dynrt_status_t *cudaFailure(const char *call, cudaError_t e) {
    return makeStatus(DYNRT_INTERNAL,
                      "NCCL communicator: " + cudaText(call, e));
  }
  int fail(std::string message) {
    lastError_ = std::move(message);
    return 1;
  }
  std::string error() {
    std::lock_guard<std::mutex> lock(mutex_);
    return failure_;
  }
  int checkGroup(const char *group, int type) {
    if (group_ != group)
      return fail("this NCCL communicator is process group '" + group_ +
                  "', not '" + group + "'");
    if (type < 0)
      return fail("a dtype NCCL does not carry");
    return 0;
  }
  /// An event from the pool, or a new one (the caller holds mutex_).
  cudaEvent_t takeEvent() {
    if (!freeEvents_.empty()) {
      cudaEvent_t e = freeEvents_.front();
      freeEvents_.pop_front();
      return e;
    }
    cudaEvent_t e = nullptr;
    libraries().eventCreateWithFlags(&e, cudaEventDisableTiming);
    return e;
  }
  /// A waited work's event goes back to the pool (a later record replaces
  /// the state a stream's wait already took).
  void recycle(cudaEvent_t e) {
    std::lock_guard<std::mutex> lock(mutex_);
    freeEvents_.push_back(e);
  }

  /// Every few milliseconds: the oldest collective still running, if past the
  /// timeout, aborts the communicator; an asynchronous NCCL error too.
  void watch() {
    const Libraries &l = libraries();
    l.setDevice(device_);
    while (!stop_.load()) {
      std::string why;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait_for(lock, std::chrono::milliseconds(5));
        while (!inFlight_.empty() &&
               (!inFlight_.front() ||
                l.eventQuery(inFlight_.front()->done) != cudaErrorNotReady))
          inFlight_.pop_front();
        while (!replays_.empty() &&
               l.eventQuery(replays_.front().done) != cudaErrorNotReady) {
          freeEvents_.push_back(replays_.front().done);
          replays_.pop_front();
        }
        if (!replays_.empty() && timeoutMs_ > 0 &&
            std::chrono::steady_clock::now() - replays_.front().started >
                std::chrono::milliseconds(timeoutMs_))
          why = "the collectives of a CUDA graph replay over process group '" +
                group_ + "' did not complete within " +
                std::to_string(timeoutMs_) +
                " ms (a rank that died or replayed other graphs?)";
        if (!inFlight_.empty() && timeoutMs_ > 0 &&
            std::chrono::steady_clock::now() - inFlight_.front()->started >
                std::chrono::milliseconds(timeoutMs_))
          why = inFlight_.front()->what + " did not complete within " +
                std::to_string(timeoutMs_) +
                " ms (a rank that died or issued other collectives?)";
      }
      ncclResult_t async = ncclSuccess;
      std::unique_lock<std::mutex> issuing(mutex_);
      if (!comm_ || stop_.load()) // aborted by start(), or being destroyed
        return;
      if (why.empty() && l.commGetAsyncError(comm_, &async) == ncclSuccess &&
          async != ncclSuccess && async != ncclInProgress)
        why = "NCCL reported an error: " + ncclText(async);
      if (!why.empty()) {
        failure_ = "NCCL communicator aborted: " + why;
        failed_.store(true);
        ncclComm_t comm = comm_;
        comm_ = nullptr;
        // Aborted outside the lock: NCCL's teardown of a communicator whose
        // collectives were captured into CUDA graphs can take long, and
        // every later call must fail at once with the reason meanwhile.
        // From here on this thread touches no member: the destructor may
        // leave it to finish on its own (stopWatchdog).
        aborting_ = true;
        issuing.unlock();
        l.commAbort(comm); // its kernels return; the streams go on
        return;
      }
    }
  }

  /// Ends the watchdog. One inside ncclCommAbort is not waited for: that
  /// abort may not return while a CUDA graph that captured the
  /// communicator's work lives on, and the destructor must not hang.
  void stopWatchdog() {
    bool aborting;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_.store(true);
      aborting = aborting_;
    }
    wake_.notify_all();
    if (!watchdog_.joinable())
      return;
    if (aborting)
      watchdog_.detach();
    else
      watchdog_.join();
  }
};
thread_local std::string NcclCommunicator::lastError_;

NcclCommunicator *self(void *p) { return static_cast<NcclCommunicator *>(p); }
} // namespace

extern "C" dynrt_status_t *dynrt_nccl_unique_id(uint8_t *id) {
  return dynrt::guarded("dynrt_nccl_unique_id", [&]() -> dynrt_status_t * {
    if (!id)
      return makeStatus(DYNRT_INVALID_ARGUMENT,
                        "dynrt_nccl_unique_id: id is null");
    const Libraries &l = libraries();
    if (!l.error.empty())
      return makeStatus(DYNRT_UNIMPLEMENTED,
                        "dynrt_nccl_unique_id: " + l.error);
    ncclUniqueId u;
    if (ncclResult_t r = l.getUniqueId(&u))
      return makeStatus(DYNRT_INTERNAL,
                        std::string("ncclGetUniqueId: ") + l.getErrorString(r));
    std::memcpy(id, u.internal, sizeof u.internal);
    return nullptr;
  });
}

extern "C" dynrt_status_t *
dynrt_nccl_communicator_create(const uint8_t *id, int size, int rank,
                               int device, const char *group, int timeout_ms,
                               dynrt_communicator_t **out) {
  return dynrt::guarded(
      "dynrt_nccl_communicator_create", [&]() -> dynrt_status_t * {
        if (!id || !out || !group)
          return makeStatus(DYNRT_INVALID_ARGUMENT,
                            "dynrt_nccl_communicator_create: id, group and out "
                            "must not be null");
        *out = nullptr;
        if (size < 1 || rank < 0 || rank >= size || device < 0 ||
            timeout_ms < 0)
          return makeStatus(
              DYNRT_INVALID_ARGUMENT,
              "dynrt_nccl_communicator_create: rank " + std::to_string(rank) +
                  " of " + std::to_string(size) + " ranks on device " +
                  std::to_string(device) + ", timeout " +
                  std::to_string(timeout_ms) + " ms is not valid");
        const Libraries &l = libraries();
        if (!l.error.empty())
          return makeStatus(DYNRT_UNIMPLEMENTED,
                            "dynrt_nccl_communicator_create: " + l.error);
        auto c = std::make_unique<NcclCommunicator>(group, size, rank, device,
                                                    timeout_ms);
        ncclUniqueId u;
        std::memcpy(u.internal, id, sizeof u.internal);
        if (dynrt_status_t *s = c->init(u))
          return s;
        dynrt_communicator_t &t = c->table;
        t.abi_version = DYNRT_COMMUNICATOR_ABI_VERSION;
        t.self = c.get();
        t.group_size = [](void *p, const char *g, int *size, int *rank) {
          return self(p)->groupSize(g, size, rank);
        };
        t.all_reduce = [](void *p, const char *g, DLTensor *x,
                          dynrt_reduce_op_t op, void *s, void **w) {
          return self(p)->allReduce(g, x, op, s, w);
        };
        t.all_gather = [](void *p, const char *g, const DLTensor *in,
                          DLTensor *o, void *s, void **w) {
          return self(p)->allGather(g, in, o, s, w);
        };
        t.reduce_scatter = [](void *p, const char *g, const DLTensor *in,
                              DLTensor *o, dynrt_reduce_op_t op, void *s,
                              void **w) {
          return self(p)->reduceScatter(g, in, o, op, s, w);
        };
        t.broadcast = [](void *p, const char *g, DLTensor *x, int src, void *s,
                         void **w) {
          return self(p)->broadcast(g, x, src, s, w);
        };
        t.wait = [](void *p, void *w, void *s) { return self(p)->wait(w, s); };
        t.all_to_all = [](void *p, const char *g, const DLTensor *in,
                          DLTensor *o, const int64_t *inCounts,
                          const int64_t *outCounts, void *s, void **w) {
          return self(p)->allToAll(g, in, o, inCounts, outCounts, s, w);
        };
        t.last_error = [](void *p) { return self(p)->lastError(); };
        t.graph_replay = [](void *p, void *stream, int queued) {
          return self(p)->graphReplay(stream, queued);
        };
        *out = &c.release()->table;
        return nullptr;
      });
}

extern "C" void dynrt_nccl_communicator_free(dynrt_communicator_t *c) {
  if (c)
    delete static_cast<NcclCommunicator *>(c->self);
}
