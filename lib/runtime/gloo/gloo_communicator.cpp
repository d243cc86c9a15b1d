//===- gloo_communicator.cpp - a dynrt_communicator_t over gloo -----------===//
//
// libdynrt's communicator for CPU models, in a plugin of its own
// (libdynrt_gloo.so): gloo is a C++ library with dependencies of its own
// (Debian's libgloo0 pulls in ibverbs and hiredis), so libdynrt does not
// link it. dynrt_gloo_communicator_create (gloo_plugin.cpp, in libdynrt)
// loads this plugin and calls its one C entry point.
//
// The ranks meet through gloo's file store (a folder every rank reaches; a
// new one per rendezvous) and connect a full mesh over gloo's TCP transport.
// Collectives are gloo's own algorithms, run in issue order on a thread of
// the communicator's: a call queues one and returns its work handle, which
// `wait` waits for, so the model computes while gloo communicates (the
// backward pass with its bucketed all-reduces in flight). Every collective is
// bounded by the timeout; after one fails (a timeout, a peer gone), the mesh
// is in an unknown state and every later one fails naming that first failure.
//
//===----------------------------------------------------------------------===//
#include "dynrt/dynrt.h"

#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/alltoallv.h>
#include <gloo/broadcast.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/file_store.h>
#include <gloo/rendezvous/prefix_store.h>
#include <gloo/transport/tcp/device.h>

#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

// bfloat16 and float16 reduce in float32, rounding back to nearest even.
float bf16ToFloat(uint16_t v) {
  uint32_t bits = uint32_t(v) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}
uint16_t floatToBf16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  if ((bits & 0x7fffffff) > 0x7f800000) // NaN stays NaN
    return uint16_t((bits >> 16) | 0x40);
  return uint16_t((bits + 0x7fff + ((bits >> 16) & 1)) >> 16);
}

struct Sum {
  template <typename T> T operator()(T a, T b) const { return a + b; }
};
struct Product {
  template <typename T> T operator()(T a, T b) const { return a * b; }
};
struct Min {
  template <typename T> T operator()(T a, T b) const { return b < a ? b : a; }
};
struct Max {
  template <typename T> T operator()(T a, T b) const { return a < b ? b : a; }
};

template <typename T, typename Op>
void reduce(void *c, const void *a, const void *b, size_t n) {
  auto *out = static_cast<T *>(c);
  auto *x = static_cast<const T *>(a), *y = static_cast<const T *>(b);
  for (size_t i = 0; i < n; ++i)
    out[i] = Op()(x[i], y[i]);
}

template <typename Op>
void reduceBf16(void *c, const void *a, const void *b, size_t n) {
  auto *out = static_cast<uint16_t *>(c);
  auto *x = static_cast<const uint16_t *>(a),
       *y = static_cast<const uint16_t *>(b);
  for (size_t i = 0; i < n; ++i)
    out[i] = floatToBf16(Op()(bf16ToFloat(x[i]), bf16ToFloat(y[i])));
}

using ReduceFn = void (*)(void *, const void *, const void *, size_t);

template <typename T> ReduceFn pick(dynrt_reduce_op_t op) {
  switch (op) {
  case DYNRT_REDUCE_SUM:
  case DYNRT_REDUCE_AVG: // the sum, divided afterwards
    return &reduce<T, Sum>;
  case DYNRT_REDUCE_PRODUCT:
    return &reduce<T, Product>;
  case DYNRT_REDUCE_MIN:
    return &reduce<T, Min>;
  case DYNRT_REDUCE_MAX:
    return &reduce<T, Max>;
  }
  return nullptr;
}

ReduceFn pickBf16(dynrt_reduce_op_t op) {
  switch (op) {
  case DYNRT_REDUCE_SUM:
  case DYNRT_REDUCE_AVG:
    return &reduceBf16<Sum>;
  case DYNRT_REDUCE_PRODUCT:
    return &reduceBf16<Product>;
  case DYNRT_REDUCE_MIN:
    return &reduceBf16<Min>;
  case DYNRT_REDUCE_MAX:
    return &reduceBf16<Max>;
  }
  return nullptr;
}

template <typename T> void divide(void *data, size_t n, int by) {
  auto *p = static_cast<T *>(data);
  for (size_t i = 0; i < n; ++i)
    p[i] = T(p[i] / T(by));
}

/// What a collective reads of a DLTensor (contiguous on the CPU).
struct Buffer {
  void *data;
  size_t elements, bytes;
  DLDataType dtype;
};

Buffer bufferOf(const DLTensor &t) {
  size_t n = 1;
  for (int d = 0; d < t.ndim; ++d)
    n *= size_t(t.shape[d]);
  return {static_cast<char *>(t.data) + t.byte_offset, n,
          n * ((t.dtype.bits * t.dtype.lanes + 7) / 8), t.dtype};
}

/// A queued collective: its body, and once the worker ran it, its error
/// ("" when it succeeded).
struct Work {
  std::function<void()> body;
  std::string what;
  bool done = false;
  std::string error;
};

class GlooCommunicator {
public:
  GlooCommunicator(std::string group, std::shared_ptr<gloo::Context> context,
                   std::chrono::milliseconds timeout)
      : group_(std::move(group)), context_(std::move(context)),
        timeout_(timeout), worker_([this] { loop(); }) {}

  ~GlooCommunicator() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    queued_.notify_one();
    worker_.join(); // after what was queued has run
  }

  dynrt_communicator_t *table() { return &table_; }

  int groupSize(const char *group, int *size, int *rank) {
    if (!checkGroup(group, "group_size"))
      return 1;
    *size = context_->size;
    *rank = context_->rank;
    return 0;
  }

  // Each collective takes what it needs of the caller's DLTensors now (their
  // structs are the caller's only until the call returns; their memory until
  // the wait) and checks its sizes before anything is queued.
  int allReduce(const char *group, DLTensor *t, dynrt_reduce_op_t op,
                void **work) {
    Buffer b = bufferOf(*t);
    return run(group, "all_reduce", work,
               [=] { reduceInPlace(b.data, b, op); });
  }

  int allGather(const char *group, const DLTensor *input, DLTensor *output,
                void **work) {
    Buffer in = bufferOf(*input), out = bufferOf(*output);
    if (out.bytes != in.bytes * size_t(context_->size))
      return refuse("all_gather", "the output is not group size x the input");
    return run(group, "all_gather", work, [=] {
      gloo::AllgatherOptions o(context_);
      o.setInput(static_cast<uint8_t *>(in.data), in.bytes);
      o.setOutput(static_cast<uint8_t *>(out.data), out.bytes);
      o.setTimeout(timeout_);
      gloo::allgather(o);
    });
  }

  // gloo has no reduce-scatter over unbound buffers: the whole input is
  // all-reduced in a copy and this rank's slice kept (as torch's gloo
  // backend does for reduce_scatter_tensor).
  int reduceScatter(const char *group, const DLTensor *input, DLTensor *output,
                    dynrt_reduce_op_t op, void **work) {
    Buffer in = bufferOf(*input), out = bufferOf(*output);
    if (in.bytes != out.bytes * size_t(context_->size))
      return refuse("reduce_scatter",
                    "the input is not group size x the output");
    return run(group, "reduce_scatter", work, [=] {
      std::vector<uint8_t> whole(in.bytes);
      std::memcpy(whole.data(), in.data, in.bytes);
      reduceInPlace(whole.data(), in, op);
      std::memcpy(out.data, whole.data() + out.bytes * size_t(context_->rank),
                  out.bytes);
    });
  }

  int broadcast(const char *group, DLTensor *t, int src, void **work) {
    if (src < 0 || src >= context_->size)
      return refuse("broadcast", "source rank " + std::to_string(src) +
                                     " is not in the group");
    Buffer b = bufferOf(*t);
    return run(group, "broadcast", work, [=] {
      gloo::BroadcastOptions o(context_);
      o.setOutput(static_cast<uint8_t *>(b.data), b.bytes);
      o.setRoot(src);
      o.setTimeout(timeout_);
      gloo::broadcast(o);
    });
  }

  int allToAll(const char *group, const DLTensor *input, DLTensor *output,
               const int64_t *inCounts, const int64_t *outCounts, void **work) {
    Buffer in = bufferOf(*input), out = bufferOf(*output);
    size_t elem = in.elements ? in.bytes / in.elements : 0;
    std::vector<int64_t> inBytes, outBytes;
    for (int r = 0; r < context_->size; ++r) {
      inBytes.push_back(inCounts[r] * int64_t(elem));
      outBytes.push_back(outCounts[r] * int64_t(elem));
    }
    return run(group, "all_to_all", work, [=] {
      gloo::AlltoallvOptions o(context_);
      o.setInput(static_cast<uint8_t *>(in.data), inBytes);
      o.setOutput(static_cast<uint8_t *>(out.data), outBytes);
      o.setTimeout(timeout_);
      gloo::alltoallv(o);
    });
  }

  /// Waits for `work` (from a collective) to have run; frees it.
  int wait(void *work) {
    auto *w = static_cast<Work *>(work);
    if (!w)
      return 0;
    std::unique_lock<std::mutex> lock(mutex_);
    ran_.wait(lock, [&] { return w->done; });
    std::string error = std::move(w->error);
    delete w;
    if (error.empty())
      return 0;
    error_ = std::move(error);
    return 1;
  }

  const char *lastError() const {
    return error_.empty() ? nullptr : error_.c_str();
  }

private:
  bool checkGroup(const char *group, const char *what) {
    if (group && group_ == group)
      return true;
    error_ = std::string("gloo communicator: ") + what + " on process group '" +
             (group ? group : "(null)") +
             "', but this communicator is group '" + group_ + "'";
    return false;
  }

  /// Queues `body` for the worker; *work is its handle.
  int run(const char *group, const char *what, void **work,
          std::function<void()> body) {
    *work = nullptr;
    if (!checkGroup(group, what))
      return 1;
    auto *w = new Work{std::move(body), what};
    {
      std::lock_guard<std::mutex> lock(mutex_);
      queue_.push_back(w);
    }
    queued_.notify_one();
    *work = w;
    return 0;
  }

  /// The worker: runs the queued collectives in order (every rank issues
  /// them in the same order, as gloo needs).
  void loop() {
    for (;;) {
      Work *w;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        queued_.wait(lock, [&] { return stop_ || !queue_.empty(); });
        if (queue_.empty())
          return;
        w = queue_.front();
        queue_.pop_front();
      }
      std::string error;
      if (!failed_.empty()) {
        error = "gloo communicator: " + w->what +
                " refused: an earlier collective failed (" + failed_ + ")";
      } else {
        try {
          w->body();
        } catch (const std::exception &e) {
          failed_ = w->what + " on rank " + std::to_string(context_->rank) +
                    ": " + e.what();
          error = "gloo communicator: " + failed_;
        }
      }
      {
        std::lock_guard<std::mutex> lock(mutex_);
        w->error = std::move(error);
        w->done = true;
      }
      ran_.notify_all();
    }
  }

  int refuse(const char *what, const std::string &why) {
    error_ = std::string("gloo communicator: ") + what + ": " + why;
    return 1;
  }

  void reduceInPlace(void *data, const Buffer &b, dynrt_reduce_op_t op) {
    size_t n = b.elements;
    ReduceFn fn = nullptr;
    void (*avg)(void *, size_t, int) = nullptr;
    auto code = b.dtype.code;
    int bits = b.dtype.bits;
    if (code == kDLFloat && bits == 32)
      fn = pick<float>(op), avg = &divide<float>;
    else if (code == kDLFloat && bits == 64)
      fn = pick<double>(op), avg = &divide<double>;
    else if (code == kDLFloat && bits == 16)
      fn = pick<_Float16>(op), avg = &divide<_Float16>;
    else if (code == kDLBfloat && bits == 16)
      fn = pickBf16(op);
    else if (code == kDLInt && bits == 64)
      fn = pick<int64_t>(op), avg = &divide<int64_t>;
    else if (code == kDLInt && bits == 32)
      fn = pick<int32_t>(op), avg = &divide<int32_t>;
    else if (code == kDLInt && bits == 8)
      fn = pick<int8_t>(op);
    else if (code == kDLUInt &&
             bits == 8) // and bool (DLPack < 1.0 has no kDLBool)
      fn = pick<uint8_t>(op);
    if (!fn)
      throw std::runtime_error("no reduction for dtype (code " +
                               std::to_string(code) + ", " +
                               std::to_string(bits) + " bits)");
    size_t elem = (bits + 7) / 8;
    gloo::AllreduceOptions o(context_);
    // gloo's reductions work on whole elements of the type it is given.
    if (elem == 8) {
      o.setOutput(static_cast<int64_t *>(data), n);
    } else if (elem == 4) {
      o.setOutput(static_cast<int32_t *>(data), n);
    } else if (elem == 2) {
      o.setOutput(static_cast<int16_t *>(data), n);
    } else {
      o.setOutput(static_cast<int8_t *>(data), n);
    }
    o.setReduceFunction(fn);
    o.setTimeout(timeout_);
    gloo::allreduce(o);
    if (op == DYNRT_REDUCE_AVG) {
      if (code == kDLBfloat) {
        auto *p = static_cast<uint16_t *>(data);
        for (size_t i = 0; i < n; ++i)
          p[i] = floatToBf16(bf16ToFloat(p[i]) / float(context_->size));
      } else if (avg) {
        avg(data, n, context_->size);
      } else {
        throw std::runtime_error("no average for this dtype");
      }
    }
  }

  std::string group_;
  std::shared_ptr<gloo::Context> context_;
  std::chrono::milliseconds timeout_;
  std::mutex mutex_;
  std::condition_variable queued_, ran_;
  std::deque<Work *> queue_;
  bool stop_ = false;
  std::string error_;
  std::string failed_; // the worker's
  dynrt_communicator_t table_{};
  std::thread worker_; // last: starts once the rest is made
};

GlooCommunicator *self(void *p) { return static_cast<GlooCommunicator *>(p); }

void fill(dynrt_communicator_t &t, GlooCommunicator *c) {
  t.abi_version = DYNRT_COMMUNICATOR_ABI_VERSION;
  t.self = c;
  t.group_size = [](void *s, const char *g, int *size, int *rank) {
    return self(s)->groupSize(g, size, rank);
  };
  t.all_reduce = [](void *s, const char *g, DLTensor *x, dynrt_reduce_op_t op,
                    void *,
                    void **work) { return self(s)->allReduce(g, x, op, work); };
  t.all_gather = [](void *s, const char *g, const DLTensor *in, DLTensor *out,
                    void *, void **work) {
    return self(s)->allGather(g, in, out, work);
  };
  t.reduce_scatter = [](void *s, const char *g, const DLTensor *in,
                        DLTensor *out, dynrt_reduce_op_t op, void *,
                        void **work) {
    return self(s)->reduceScatter(g, in, out, op, work);
  };
  t.broadcast = [](void *s, const char *g, DLTensor *x, int src, void *,
                   void **work) { return self(s)->broadcast(g, x, src, work); };
  t.wait = [](void *s, void *work, void *) { return self(s)->wait(work); };
  t.all_to_all = [](void *s, const char *g, const DLTensor *in, DLTensor *out,
                    const int64_t *inCounts, const int64_t *outCounts, void *,
                    void **work) {
    return self(s)->allToAll(g, in, out, inCounts, outCounts, work);
  };
  t.last_error = [](void *s) { return self(s)->lastError(); };
}

void say(char *error, size_t size, const std::string &text) {
  if (error && size) {
    std::strncpy(error, text.c_str(), size - 1);
    error[size - 1] = '\0';
  }
}

} // namespace

// The plugin's entry points (gloo_plugin.cpp calls them): 0 and *out set, or
// non-zero with the reason in `error`.
extern "C" __attribute__((visibility("default"))) int
dynrt_gloo_plugin_create(const char *store, int size, int rank,
                         const char *group, const char *hostname,
                         int timeout_ms, dynrt_communicator_t **out,
                         char *error, size_t errorSize) {
  try {
    gloo::transport::tcp::attr attr;
    attr.hostname = hostname && *hostname ? hostname : "127.0.0.1";
    auto device = gloo::transport::tcp::CreateDevice(attr);
    gloo::rendezvous::FileStore files(store);
    gloo::rendezvous::PrefixStore prefixed(group, files);
    auto context = std::make_shared<gloo::rendezvous::Context>(rank, size);
    auto timeout = std::chrono::milliseconds(timeout_ms > 0 ? timeout_ms
                                                            : 24 * 3600 * 1000);
    context->setTimeout(timeout);
    context->connectFullMesh(prefixed, device);
    auto *c = new GlooCommunicator(group, std::move(context), timeout);
    fill(*c->table(), c);
    *out = c->table();
    return 0;
  } catch (const std::exception &e) {
    say(error, errorSize,
        "gloo rendezvous of rank " + std::to_string(rank) + " of " +
            std::to_string(size) + " through '" + store +
            "' failed: " + e.what());
    return 1;
  }
}

extern "C" __attribute__((visibility("default"))) void
dynrt_gloo_plugin_free(dynrt_communicator_t *c) {
  if (c)
    delete self(c->self);
}
