//===- collectives.cpp - a model's collectives through a communicator -----===//
//
// A model built from a torch.distributed program calls its collectives
// through the table it takes from dynoc_bind_collectives (model_abi.h's
// dynoc_collectives: flat buffers and DLPack type codes); this file
// makes that table from the communicator the caller gives
// dynrt_model_set_communicator (DLPack tensors), after checking that the
// process groups have the sizes capture saw and that every rank loaded the
// same graphs.
//
//===----------------------------------------------------------------------===//
#include "collectives.h"

#include "dynrt/digest.h"
#include "model_internal.h"
#include "status.h"

#include <dlfcn.h>

#include <map>
#include <string>
#include <vector>

using dynrt::makeStatus;

namespace {
enum Kind {
  kAllReduce = DYNOC_ALL_REDUCE,
  kAllGather = DYNOC_ALL_GATHER,
  kReduceScatter = DYNOC_REDUCE_SCATTER,
  kBroadcast = DYNOC_BROADCAST
};
const char *const kKindNames[] = {"all_reduce", "all_gather_into_tensor",
                                  "reduce_scatter_tensor", "broadcast"};

// The text of the last collective that failed on this thread, for the status
// of the run that called it.
thread_local std::string lastFailure;

std::string communicatorError(const dynrt_communicator_t *c) {
  const char *e = c->last_error ? c->last_error(c->self) : nullptr;
  return e && *e ? e : "no reason given";
}
} // namespace

struct dynrt::CollectivesBinding {
  dynoc_collectives table;
  const dynrt_communicator_t *communicator;
  DLDevice device;
  // The communicator's graph_replay (ABI 3), or null: its collectives may
  // be captured into CUDA graphs when it is not.
  int (*graphReplay)(void *self, void *stream, int queued) = nullptr;
};

namespace {
int startCollective(void *self, int kind, const char *group, const void *in,
                    void *out, int64_t inCount, int64_t outCount, int dtypeCode,
                    int dtypeBits, int reduceOp, int64_t root, void *stream,
                    void **work) {
  auto *b = static_cast<dynrt::CollectivesBinding *>(self);
  const dynrt_communicator_t *c = b->communicator;
  DLDataType dtype{uint8_t(dtypeCode), uint8_t(dtypeBits), 1};
  DLTensor input{
      const_cast<void *>(in), b->device, 1, dtype, &inCount, nullptr, 0};
  DLTensor output{out, b->device, 1, dtype, &outCount, nullptr, 0};
  auto op = static_cast<dynrt_reduce_op_t>(reduceOp);
  int rc = 1;
  *work = nullptr;
  if (kind == kAllReduce)
    rc = c->all_reduce(c->self, group, &output, op, stream, work);
  else if (kind == kAllGather)
    rc = c->all_gather(c->self, group, &input, &output, stream, work);
  else if (kind == kReduceScatter)
    rc = c->reduce_scatter(c->self, group, &input, &output, op, stream, work);
  else if (kind == kBroadcast)
    rc = c->broadcast(c->self, group, &output, int(root), stream, work);
  if (rc == 0)
    return 0;
  lastFailure = std::string(kind >= 0 && kind < 4 ? kKindNames[kind] : "?") +
                " over process group '" + group +
                "' failed: " + communicatorError(c);
  return dynrt::kCollectiveFailed;
}

int allToAllCollective(void *self, const char *group, const void *in, void *out,
                       const int64_t *inCounts, const int64_t *outCounts, int n,
                       int dtypeCode, int dtypeBits, void *stream,
                       void **work) {
  auto *b = static_cast<dynrt::CollectivesBinding *>(self);
  const dynrt_communicator_t *c = b->communicator;
  int64_t inTotal = 0, outTotal = 0;
  for (int i = 0; i < n; ++i) {
    inTotal += inCounts[i];
    outTotal += outCounts[i];
  }
  DLDataType dtype{uint8_t(dtypeCode), uint8_t(dtypeBits), 1};
  DLTensor input{
      const_cast<void *>(in), b->device, 1, dtype, &inTotal, nullptr, 0};
  DLTensor output{out, b->device, 1, dtype, &outTotal, nullptr, 0};
  *work = nullptr;
  if (c->all_to_all(c->self, group, &input, &output, inCounts, outCounts,
                    stream, work) == 0)
    return 0;
  lastFailure = std::string("all_to_all_single over process group '") + group +
                "' failed: " + communicatorError(c);
  return dynrt::kCollectiveFailed;
}

int waitCollective(void *self, void *work, void *stream) {
  auto *b = static_cast<dynrt::CollectivesBinding *>(self);
  const dynrt_communicator_t *c = b->communicator;
  if (c->wait(c->self, work, stream) == 0)
    return 0;
  lastFailure = "waiting for a collective failed: " + communicatorError(c);
  return dynrt::kCollectiveFailed;
}

/// The process groups of the model's graphs: name -> the size capture saw
/// (parseManifest checked each; graphs that disagree are refused here).
dynrt_status_t *groupsOf(const dynrt_model_t &m,
                         std::map<std::string, int64_t> &groups) {
  for (const dynrt::GraphSpec &g : m.manifest.graphs)
    for (const dynrt::ProcessGroup &pg : g.processGroups) {
      auto [it, fresh] = groups.emplace(pg.name, pg.size);
      if (!fresh && it->second != pg.size)
        return makeStatus(DYNRT_DATA_LOSS,
                          "model '" + m.path +
                              "': its graphs disagree on the "
                              "size of process group '" +
                              pg.name + "' (" + std::to_string(it->second) +
                              " and " + std::to_string(pg.size) + ")");
    }
  return nullptr;
}

/// Every rank of `group` (`size` ranks, this one `rank`) loaded graphs of
/// the digest `mine`: one all-gather of the digests. A rank that differs is
/// named on every rank, before any graph's collective runs.
dynrt_status_t *sameGraphsOnEveryRank(dynrt_model_t &m,
                                      const dynrt_communicator_t *c,
                                      dynrt::CollectivesBinding &b,
                                      const std::string &group, int size,
                                      int rank, uint64_t mine) {
  std::vector<uint64_t> all(size_t(size), 0);
  const size_t bytes = all.size() * sizeof(uint64_t);
  dynrt::DeviceBuffer in(&m.device), out(&m.device);
  void *inData, *outData;
  if (dynrt_status_t *s = in.reserve(sizeof mine, &inData))
    return s;
  if (dynrt_status_t *s = out.reserve(bytes, &outData))
    return s;
  if (dynrt_status_t *s = m.device.upload(inData, &mine, sizeof mine, nullptr))
    return s;
  if (dynrt_status_t *s = m.device.sync(nullptr))
    return s;
  void *work = nullptr;
  int rc = startCollective(&b, kAllGather, group.c_str(), inData, outData,
                           int64_t(sizeof mine), int64_t(bytes), kDLUInt, 8, 0,
                           0, nullptr, &work);
  if (rc == 0 && work)
    rc = waitCollective(&b, work, nullptr);
  if (rc)
    return makeStatus(DYNRT_INTERNAL,
                      "dynrt_model_set_communicator: comparing the ranks' "
                      "graphs: " +
                          lastFailure);
  if (dynrt_status_t *s = m.device.download(all.data(), outData, bytes))
    return s;
  std::string differ;
  for (int r = 0; r < size; ++r)
    if (all[size_t(r)] != mine)
      differ += (differ.empty() ? "" : ", ") + std::to_string(r);
  if (differ.empty())
    return nullptr;
  return makeStatus(
      DYNRT_FAILED_PRECONDITION,
      "model '" + m.path + "': rank(s) " + differ + " of process group '" +
          group + "' loaded other graphs than rank " + std::to_string(rank) +
          " (every rank must run the same graphs; no collective "
          "was issued)");
}
} // namespace

namespace dynrt {

void CollectivesBindingDeleter::operator()(CollectivesBinding *b) const {
  delete b;
}

dynrt_status_t *collectiveFailed(const std::string &graph) {
  std::string why = std::move(lastFailure);
  lastFailure.clear();
  return makeStatus(DYNRT_INTERNAL, "graph '" + graph + "': " + why);
}

bool usesCollectives(const GraphSpec &g) { return !g.processGroups.empty(); }

bool collectivesCapturable(const dynrt_model_t &m) {
  return m.collectives && m.collectives->graphReplay;
}

dynrt_status_t *graphReplay(const dynrt_model_t &m, const GraphSpec &g,
                            void *stream, bool queued) {
  const CollectivesBinding &b = *m.collectives;
  if (b.graphReplay(b.communicator->self, stream, queued ? 1 : 0) == 0)
    return nullptr;
  return makeStatus(DYNRT_INTERNAL, "graph '" + g.name +
                                        "': its CUDA graph's collectives: " +
                                        communicatorError(b.communicator));
}

dynrt_status_t *requireCommunicator(const dynrt_model_t &m,
                                    const GraphSpec &g) {
  if (!usesCollectives(g) || m.collectives)
    return nullptr;
  return makeStatus(DYNRT_FAILED_PRECONDITION,
                    "graph '" + g.name + "' of model '" + m.path +
                        "' runs collectives over process group '" +
                        g.processGroups.front().name +
                        "': bind a communicator first "
                        "(dynrt_model_set_communicator; from Python, "
                        "dynoc.load(path, communicator=...))");
}

} // namespace dynrt

extern "C" dynrt_status_t *
dynrt_model_set_communicator(dynrt_model_t *model,
                             const dynrt_communicator_t *c) {
  if (!model)
    return makeStatus(DYNRT_INVALID_ARGUMENT,
                      "dynrt_model_set_communicator: model is null");
  dynrt_model_t &m = *model;
  std::map<std::string, int64_t> groups;
  if (dynrt_status_t *s = groupsOf(m, groups))
    return s;
  if (groups.empty())
    return nullptr; // no collectives: nothing to bind
  auto bind = reinterpret_cast<dynoc_bind_collectives_fn>(
      dlsym(m.handle, DYNOC_BIND_COLLECTIVES_SYMBOL));
  if (!bind)
    return makeStatus(DYNRT_DATA_LOSS,
                      "model '" + m.path +
                          "' lists process groups but lacks the symbol "
                          "'dynoc_bind_collectives'");
  if (!c) {
    bind(nullptr);
    m.collectives.reset();
    return nullptr;
  }
  // Version 2 is version 3 without graph_replay (not read from it).
  if (c->abi_version != DYNRT_COMMUNICATOR_ABI_VERSION && c->abi_version != 2)
    return makeStatus(DYNRT_INVALID_ARGUMENT,
                      "dynrt_model_set_communicator: the communicator has ABI "
                      "version " +
                          std::to_string(c->abi_version) + ", this runtime " +
                          "2 or " +
                          std::to_string(DYNRT_COMMUNICATOR_ABI_VERSION));
  const std::pair<const char *, bool> functions[] = {
      {"group_size", c->group_size != nullptr},
      {"all_reduce", c->all_reduce != nullptr},
      {"all_gather", c->all_gather != nullptr},
      {"reduce_scatter", c->reduce_scatter != nullptr},
      {"broadcast", c->broadcast != nullptr},
      {"all_to_all", c->all_to_all != nullptr},
      {"wait", c->wait != nullptr}};
  for (auto [name, present] : functions)
    if (!present)
      return makeStatus(DYNRT_INVALID_ARGUMENT,
                        std::string("dynrt_model_set_communicator: the "
                                    "communicator's '") +
                            name + "' is null");
  auto binding = std::unique_ptr<dynrt::CollectivesBinding,
                                 dynrt::CollectivesBindingDeleter>(
      new dynrt::CollectivesBinding{
          {DYNOC_COLLECTIVES_ABI_VERSION, nullptr, startCollective,
           waitCollective, allToAllCollective},
          c,
          m.device.dl(),
          c->abi_version >= 3 ? c->graph_replay : nullptr});
  binding->table.self = binding.get();
  const uint64_t digest =
      dynrt::xxh64(m.manifestText.data(), m.manifestText.size());
  for (auto &[group, want] : groups) {
    int size = 0, rank = -1;
    if (c->group_size(c->self, group.c_str(), &size, &rank) != 0)
      return makeStatus(DYNRT_FAILED_PRECONDITION,
                        "model '" + m.path +
                            "': the communicator has no "
                            "process group '" +
                            group + "': " + communicatorError(c));
    if (size != want)
      return makeStatus(DYNRT_FAILED_PRECONDITION,
                        "model '" + m.path +
                            "' was captured with process "
                            "group '" +
                            group + "' of " + std::to_string(want) +
                            " ranks; the communicator's has " +
                            std::to_string(size));
    if (dynrt_status_t *s =
            sameGraphsOnEveryRank(m, c, *binding, group, size, rank, digest))
      return s;
  }
  if (int rc = bind(&binding->table))
    return makeStatus(DYNRT_UNIMPLEMENTED,
                      "model '" + m.path + "' takes collectives ABI version " +
                          std::to_string(rc) + ", this runtime gives " +
                          std::to_string(DYNOC_COLLECTIVES_ABI_VERSION));
  m.collectives = std::move(binding);
  return nullptr;
}
