//===- collectives.h - a model's collectives through a communicator -------===//
#ifndef DYNRT_COLLECTIVES_H
#define DYNRT_COLLECTIVES_H

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

/// The text of this thread's last failed collective (then cleared).
std::string takeCollectiveFailure();

/// Whether graph `g` runs collectives (its manifest lists process groups).
bool usesCollectives(const GraphSpec &g);

} // namespace dynrt

#endif // DYNRT_COLLECTIVES_H
