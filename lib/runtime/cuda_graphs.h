//===- cuda_graphs.h - a context's CUDA graphs (internal) -------*- C++ -*-===//
//
// A device model's run is a few hundred kernel launches at small batch: the
// launches, not the kernels, decide its latency. A context therefore runs
// the first call of each (variant, input shapes) directly, captures the
// second into a CUDA graph over buffers of its own (captured on a private
// non-blocking stream, since the caller's may be the legacy default stream,
// on which nothing can be captured), and from then on replays that graph on
// the caller's stream: inputs copied in, the graph, outputs copied out.
// DYNRT_CUDA_GRAPHS=0 or dynrt_context_set_cuda_graphs turns it off.
//
//===----------------------------------------------------------------------===//
#ifndef DYNRT_CUDA_GRAPHS_H
#define DYNRT_CUDA_GRAPHS_H

#include "device.h"

#include <dlpack/dlpack.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace dynrt {

/// One call of a device model's graph function.
struct GraphRun {
  const Device *device;
  const void *variant; // identifies the graph function, for the cache key
  dynoc_graph_run_on_fn run;
  const std::string &name;
  const std::vector<const int64_t *> &inShapes;
  std::vector<void *> &args; // user inputs first, then weights
  void *const *outPtrs;
  const std::vector<size_t> &outBytes;
  void *workspace;
  void *stream;
  // Called before (queued false: an error refuses the replay) and after
  // (queued true) each replay on `stream`: a graph with collectives, whose
  // communicator must be healthy and watches the replay. May be null.
  const std::function<dynrt_status_t *(void *stream, bool queued)> *onReplay =
      nullptr;
};

/// Queues the graph's kernels on the run's stream.
dynrt_status_t *runDirect(const GraphRun &run);

class GraphCache {
public:
  GraphCache() = default;
  GraphCache(const GraphCache &) = delete;
  GraphCache &operator=(const GraphCache &) = delete;
  ~GraphCache();
  void setEnabled(bool enabled) {
    if (!enabled)
      clear();
    enabled_ = enabled;
  }
  /// Drops every graph (the workspace they captured moved).
  void clear();
  /// Runs `run` on `inputs` (the user inputs), through a graph when one is
  /// captured for its variant and shapes.
  dynrt_status_t *run(const GraphRun &run, const DLTensor *const *inputs);

private:
  struct Entry {
    const Device *device = nullptr;
    const void *variant = nullptr;
    std::vector<int64_t> key; // each input's rank and dims
    int calls = 0;
    void *exec = nullptr;
    std::vector<std::unique_ptr<DeviceBuffer>> ins, outs;
    std::vector<size_t> inBytes;
  };
  dynrt_status_t *capture(Entry &e, const GraphRun &run,
                          const DLTensor *const *inputs);
  dynrt_status_t *replay(Entry &e, const GraphRun &run,
                         const DLTensor *const *inputs);
  // Beyond this many shapes a context runs directly: a model called at many
  // sizes would otherwise keep a graph and buffers for each.
  static constexpr size_t kMaxGraphs = 16;
  std::vector<Entry> entries_;
  bool enabled_ = true;
  const Device *device_ = nullptr;
  void *captureStream_ = nullptr;
};

} // namespace dynrt

#endif // DYNRT_CUDA_GRAPHS_H
