//===- ModelFixtures.cpp - models built for the runtime tests -------------===//
#include "ModelFixtures.h"

#include "dynrt/safetensors.h"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <map>
#include <mutex>
#include <unistd.h>

namespace fixtures {
namespace {
std::string runfile(const std::string &path) {
  const char *root = std::getenv("TEST_SRCDIR");
  const char *ws = std::getenv("TEST_WORKSPACE");
  if (!root || !ws)
    FAIL("run this test with bazel test (TEST_SRCDIR is not set)");
  return std::string(root) + "/" + ws + "/" + path;
}
} // namespace

std::string graphPath(const std::string &graph) {
  return runfile("test/models/" + graph + ".mlir");
}

std::string tempPath(const std::string &name) {
  const char *dir = std::getenv("TEST_TMPDIR");
  return std::string(dir ? dir : "/tmp") + "/" + name;
}

std::string buildModel(const std::string &graph, const std::string &out,
                       const std::string &flags) {
  static std::mutex mu;
  static std::map<std::string, std::string> built;
  std::lock_guard<std::mutex> lock(mu);
  auto it = built.find(out);
  if (it != built.end())
    return it->second;
  std::string so = tempPath(out + ".so");
  const char *bin = std::getenv("DYNOC_BIN");
  std::string dynoc = bin ? bin : runfile("tools/dynoc/dynoc");
  if (access(dynoc.c_str(), X_OK) != 0)
    FAIL("no dynoc binary at '" + dynoc +
         "'; under --config=asan|tsan pass "
         "--test_env=DYNOC_BIN=$PWD/bazel-bin/tools/dynoc/dynoc");
  // The compiler is not what these tests check: keep sanitizers out of it.
  std::string cmd = "ASAN_OPTIONS=detect_leaks=0 TSAN_OPTIONS=report_bugs=0 " +
                    dynoc + " build " +
                    runfile("test/models/" + graph + ".mlir") + " " + flags +
                    " -o " + so + " 2>" + tempPath(out + ".log");
  INFO(cmd);
  REQUIRE(std::system(cmd.c_str()) == 0);
  built[out] = so;
  return so;
}

HostTensor makeTensor(std::vector<int64_t> shape, unsigned seed) {
  HostTensor t(std::move(shape));
  uint32_t s = seed * 2654435761u + 1;
  for (float &v : t.data) {
    s = s * 1664525u + 1013904223u;
    v = float(s >> 8) / float(1 << 24) * 2.f - 1.f;
  }
  return t;
}

std::vector<float> dynMlpReference(const HostTensor &x, const HostTensor &y) {
  static std::unique_ptr<dynrt::SafetensorsFile> weights = [] {
    std::string error;
    auto f = dynrt::SafetensorsFile::open(
        runfile("test/models/dyn_mlp.safetensors"), error);
    if (!f)
      FAIL(error);
    return f;
  }();
  const float *w =
      reinterpret_cast<const float *>(weights->find("fc.weight")->data);
  const float *b =
      reinterpret_cast<const float *>(weights->find("fc.bias")->data);
  int64_t batch = x.shape[0];
  std::vector<float> out(batch * 8);
  for (int64_t r = 0; r < batch; ++r)
    for (int n = 0; n < 8; ++n) {
      double acc = b[n];
      for (int k = 0; k < 16; ++k)
        acc += double(x.data[r * 16 + k]) * w[n * 16 + k];
      out[r * 8 + n] = float(std::max(acc, 0.0) + y.data[r * 8 + n]);
    }
  return out;
}

} // namespace fixtures
