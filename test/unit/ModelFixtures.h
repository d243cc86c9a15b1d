//===- ModelFixtures.h - models built for the runtime tests -----*- C++ -*-===//
//
// The runtime tests run real models: they build test/models/*.mlir with the
// `dynoc` binary from the test's runfiles into the test's temporary directory.
//
//===----------------------------------------------------------------------===//
#ifndef DYNOC_TEST_MODELFIXTURES_H
#define DYNOC_TEST_MODELFIXTURES_H

#include "dynrt/dynrt.hpp"

#include <string>
#include <vector>

namespace fixtures {

/// A file under the test's temporary directory.
std::string tempPath(const std::string &name);

/// Builds test/models/<graph>.mlir into <tmp>/<out>.so with `flags` (once per
/// process) and returns the .so's path. Fails the test if the build fails.
std::string buildModel(const std::string &graph, const std::string &out,
                       const std::string &flags = "");

/// The path of test/models/<graph>.mlir in the test's runfiles.
std::string graphPath(const std::string &graph);

using HostTensor = dynrt::HostTensor;

/// `shape` filled with values from a small deterministic generator.
HostTensor makeTensor(std::vector<int64_t> shape, unsigned seed);

/// relu(x @ w^T + b) + y for test/models/dyn_mlp.mlir, from its weights file.
std::vector<float> dynMlpReference(const HostTensor &x, const HostTensor &y);

} // namespace fixtures

#endif // DYNOC_TEST_MODELFIXTURES_H
