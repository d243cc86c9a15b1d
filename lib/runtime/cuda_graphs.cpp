//===- cuda_graphs.cpp - a context's CUDA graphs --------------------------===//
#include "cuda_graphs.h"

#include "collectives.h"

#include <cstdio>

namespace dynrt {

dynrt_status_t *runDirect(const GraphRun &r) {
  if (int rc = r.run(r.inShapes.data(), r.args.data(), r.outPtrs, r.workspace,
                     r.stream)) {
    if (rc == kCollectiveFailed) // the communicator's reason, not the device's
      return collectiveFailed(r.name);
    return r.device->failed("graph '" + r.name + "'", rc);
  }
  return nullptr;
}

GraphCache::~GraphCache() {
  clear();
  if (captureStream_)
    device_->api()->stream_release(captureStream_);
}

void GraphCache::clear() {
  for (Entry &e : entries_)
    if (e.exec)
      e.device->api()->graph_release(e.exec);
  entries_.clear();
}

static size_t byteSize(const DLTensor &t) {
  size_t bytes = (t.dtype.bits * t.dtype.lanes + 7) / 8;
  for (int d = 0; d < t.ndim; ++d)
    bytes *= static_cast<size_t>(t.shape[d]);
  return bytes;
}

dynrt_status_t *GraphCache::capture(Entry &e, const GraphRun &r,
                                    const DLTensor *const *inputs) {
  const Device &dev = *r.device;
  std::vector<void *> args = r.args;
  for (size_t i = 0; i < r.inShapes.size(); ++i) {
    e.inBytes.push_back(byteSize(*inputs[i]));
    e.ins.push_back(std::make_unique<DeviceBuffer>(&dev));
    if (dynrt_status_t *s = e.ins.back()->reserve(e.inBytes.back(), &args[i]))
      return s;
  }
  std::vector<void *> outs;
  for (size_t bytes : r.outBytes) {
    e.outs.push_back(std::make_unique<DeviceBuffer>(&dev));
    outs.emplace_back();
    if (dynrt_status_t *s = e.outs.back()->reserve(bytes, &outs.back()))
      return s;
  }
  const dynoc_device_api *api = dev.api();
  if (!captureStream_) {
    if (int rc = api->stream_create(&captureStream_))
      return dev.failed("creating a stream to capture on", rc);
    device_ = &dev;
  }
  // What the caller's stream queued before (the last call's output copies)
  // must be done before the capture's kernels could be replayed: replays are
  // launched on the caller's stream, which orders them; the capture itself
  // runs nothing.
  if (int rc = api->graph_begin(captureStream_))
    return dev.failed("starting a CUDA graph capture", rc);
  int runRc = r.run(r.inShapes.data(), args.data(), outs.data(), r.workspace,
                    captureStream_);
  void *exec = nullptr;
  int endRc = api->graph_end(captureStream_, &exec);
  if (runRc) {
    if (exec)
      api->graph_release(exec);
    return dev.failed("graph '" + r.name + "' (captured)", runRc);
  }
  if (endRc)
    return dev.failed("capturing graph '" + r.name + "' into a CUDA graph",
                      endRc);
  e.exec = exec;
  return nullptr;
}

dynrt_status_t *GraphCache::replay(Entry &e, const GraphRun &r,
                                   const DLTensor *const *inputs) {
  const Device &dev = *r.device;
  for (size_t i = 0; i < e.ins.size(); ++i)
    if (dynrt_status_t *s =
            dev.copy(e.ins[i]->data(), r.args[i], e.inBytes[i], r.stream))
      return s;
  (void)inputs;
  if (r.onReplay)
    if (dynrt_status_t *s = (*r.onReplay)(r.stream, false))
      return s;
  if (int rc = dev.api()->graph_launch(e.exec, r.stream))
    return dev.failed("launching the CUDA graph of '" + r.name + "'", rc);
  if (r.onReplay)
    if (dynrt_status_t *s = (*r.onReplay)(r.stream, true))
      return s;
  for (size_t i = 0; i < e.outs.size(); ++i)
    if (dynrt_status_t *s =
            dev.copy(r.outPtrs[i], e.outs[i]->data(), r.outBytes[i], r.stream))
      return s;
  return nullptr;
}

dynrt_status_t *GraphCache::run(const GraphRun &r,
                                const DLTensor *const *inputs) {
  if (!enabled_)
    return runDirect(r);
  std::vector<int64_t> key;
  for (size_t i = 0; i < r.inShapes.size(); ++i) {
    key.push_back(inputs[i]->ndim);
    key.insert(key.end(), inputs[i]->shape, inputs[i]->shape + inputs[i]->ndim);
  }
  Entry *entry = nullptr;
  for (Entry &e : entries_)
    if (e.variant == r.variant && e.key == key)
      entry = &e;
  if (!entry) {
    if (entries_.size() >= kMaxGraphs)
      return runDirect(r);
    entries_.emplace_back();
    entry = &entries_.back();
    entry->device = r.device;
    entry->variant = r.variant;
    entry->key = std::move(key);
  }
  // The first call runs directly: it also makes the libraries' lazy state
  // (cuBLASLt's plans, module loading), which must not happen mid-capture.
  if (entry->calls++ == 0)
    return runDirect(r);
  if (!entry->exec) {
    if (dynrt_status_t *s = capture(*entry, r, inputs)) {
      // Not capturable (a call inside that a capture refuses): this context
      // runs directly from now on, and says so once.
      std::fprintf(stderr, "dynrt: CUDA graphs off for this context: %s\n",
                   dynrt_status_message(s));
      setEnabled(false);
      dynrt_status_free(s);
      return runDirect(r);
    }
  }
  return replay(*entry, r, inputs);
}

} // namespace dynrt
