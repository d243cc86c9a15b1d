//===- collectives.h - a model's collectives through a communicator -------===//
#ifndef DYNRT_COLLECTIVES_H
#define DYNRT_COLLECTIVES_H

#include "dynrt/dynrt.h"
#include "dynrt/manifest.h"

#include <string>

namespace dynrt {

/// What dynrt_model_set_communicator bound to a model (collectives.cpp).
struct CollectivesBinding;
struct CollectivesBindingDeleter {
  void operator()(CollectivesBinding *b) const;
};

/// A graph's return codes from its collectives (the prelude's
/// dynoc_kernels_collectives.h): no communicator bound, and a collective
/// that failed (takeCollectiveFailure says why).
constexpr int kNoCommunicator = 600;
constexpr int kCollectiveFailed = 601;

/// The status of graph `graph`'s run that failed in a collective on this
/// thread: the communicator's reason.
dynrt_status_t *collectiveFailed(const std::string &graph);

/// Whether graph `g` runs collectives (its manifest lists process groups).
bool usesCollectives(const GraphSpec &g);

/// Whether `m`'s communicator lets its collectives be captured into CUDA
/// graphs (it has graph_replay).
bool collectivesCapturable(const dynrt_model_t &m);

/// Tells `m`'s communicator that a replay of graph `g`'s CUDA graph is about
/// to be queued on `stream` (`queued` false: an error refuses it) or was
/// (`queued` true). collectivesCapturable(m) must hold.
dynrt_status_t *graphReplay(const dynrt_model_t &m, const GraphSpec &g,
                            void *stream, bool queued);

/// Null, or DYNRT_FAILED_PRECONDITION where `g` runs collectives and `m` has
/// no communicator bound.
dynrt_status_t *requireCommunicator(const dynrt_model_t &m, const GraphSpec &g);

} // namespace dynrt

#endif // DYNRT_COLLECTIVES_H
