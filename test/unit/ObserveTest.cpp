//===- ObserveTest.cpp - profiles, the log callback, device tensors -------===//
#include "ModelFixtures.h"

#include "dynrt/dynrt.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <fstream>
#include <string>
#include <vector>

using fixtures::HostTensor;
using fixtures::makeTensor;

namespace {
std::string errorOf(dynrt_status_t *s, dynrt_status_code_t *code = nullptr) {
  REQUIRE(s != nullptr);
  std::string msg = dynrt_status_message(s);
  if (code)
    *code = dynrt_status_code(s);
  dynrt_status_free(s);
  return msg;
}

void runOnce(dynrt::Model &model) {
  HostTensor x = makeTensor({3, 16}, 1), y = makeTensor({3, 8}, 2);
  DLTensor xv = x.view(), yv = y.view();
  model.run({&xv, &yv});
}

nlohmann::json readTrace(const std::string &path) {
  std::ifstream f(path);
  REQUIRE(f.good());
  return nlohmann::json::parse(f);
}

std::vector<nlohmann::json> spansNamed(const nlohmann::json &trace,
                                       const std::string &prefix) {
  std::vector<nlohmann::json> out;
  for (const auto &e : trace["traceEvents"])
    if (e["ph"] == "X" && e["name"].get<std::string>().rfind(prefix, 0) == 0)
      out.push_back(e);
  return out;
}

struct Collected {
  std::vector<std::pair<dynrt_log_level_t, std::string>> messages;
};
void collect(void *user, dynrt_log_level_t level, const char *message) {
  static_cast<Collected *>(user)->messages.emplace_back(level, message);
}
} // namespace

TEST_CASE("a profile has a span per kernel, inside its run, with the ops") {
  std::string so = fixtures::buildModel("dyn_mlp", "dyn_mlp_profile");
  // A model loaded before the recording starts is traced too.
  dynrt::Model before(so);
  std::string path = fixtures::tempPath("trace.json");
  REQUIRE(dynrt_profile_start(path.c_str()) == nullptr);
  dynrt_status_code_t code;
  CHECK(errorOf(dynrt_profile_start(path.c_str()), &code) ==
        "a profile is already being recorded to '" + path + "'");
  CHECK(code == DYNRT_INVALID_ARGUMENT);
  runOnce(before);
  {
    dynrt::Model during(so);
    runOnce(during);
  }
  REQUIRE(dynrt_profile_stop() == nullptr);
  runOnce(before); // not recorded

  nlohmann::json trace = readTrace(path);
  auto runs = spansNamed(trace, "run dyn_mlp");
  auto kernels = spansNamed(trace, "fused_addmm_relu_add");
  REQUIRE(runs.size() == 2);
  REQUIRE(kernels.size() == 2);
  CHECK(spansNamed(trace, "load ").size() == 1);
  for (size_t i = 0; i < 2; ++i) {
    const auto &r = runs[i], &k = kernels[i];
    CHECK(k["cat"] == "gemm");
    CHECK(k["args"]["ops"] ==
          nlohmann::json({"aten.addmm", "aten.relu", "aten.add.Tensor"}));
    CHECK(k["args"]["loc"].get<std::string>().find("dyn_mlp.mlir:") !=
          std::string::npos);
    CHECK(r["args"]["input_shapes"] == nlohmann::json({{3, 16}, {3, 8}}));
    CHECK(k["tid"] == r["tid"]);
    CHECK(k["dur"].get<double>() >= 0);
    CHECK(k["ts"].get<double>() >= r["ts"].get<double>());
    CHECK(k["ts"].get<double>() + k["dur"].get<double>() <=
          r["ts"].get<double>() + r["dur"].get<double>() + 0.01);
  }
  CHECK(trace["otherData"]["dropped_spans"] == 0);
}

TEST_CASE("profile errors name the file and leave no recording behind") {
  dynrt_status_code_t code;
  CHECK(errorOf(dynrt_profile_stop(), &code) ==
        "dynrt_profile_stop: no profile is being recorded");
  CHECK(code == DYNRT_INVALID_ARGUMENT);
  CHECK(errorOf(dynrt_profile_start("/nonexistent/dir/t.json"), &code) ==
        "cannot record a profile to '/nonexistent/dir/t.json': its directory "
        "does not exist or is not writable");
  CHECK(code == DYNRT_NOT_FOUND);
  CHECK(errorOf(dynrt_profile_start(nullptr)) ==
        "dynrt_profile_start: null argument");
  // Nothing is recording now.
  CHECK(errorOf(dynrt_profile_stop()) ==
        "dynrt_profile_stop: no profile is being recorded");
}

TEST_CASE("the log callback gets loads at its level and nothing once unset") {
  std::string so = fixtures::buildModel("dyn_mlp", "dyn_mlp_log");
  Collected got;
  dynrt_set_log_callback(collect, &got, DYNRT_LOG_INFO);
  { dynrt::Model model(so); }
  REQUIRE(got.messages.size() == 1);
  CHECK(got.messages[0].first == DYNRT_LOG_INFO);
  CHECK(got.messages[0].second ==
        "loaded model '" + so +
            "': cpu, 1 graph(s), weights 'dyn_mlp_log.weights.safetensors'");

  got.messages.clear();
  dynrt_set_log_callback(collect, &got, DYNRT_LOG_WARNING);
  { dynrt::Model model(so); }
  CHECK(got.messages.empty());

  dynrt_set_log_callback(nullptr, nullptr, DYNRT_LOG_DEBUG);
  { dynrt::Model model(so); }
  CHECK(got.messages.empty());
}

TEST_CASE("tensors are allocated on the model's device and copied there") {
  dynrt::Model model(fixtures::buildModel("dyn_mlp", "dyn_mlp_tensors"));
  int64_t shape[] = {2, 3};
  DLManagedTensor *t = nullptr;
  REQUIRE(dynrt_model_alloc_tensor(model.get(), {kDLFloat, 32, 1}, 2, shape,
                                   &t) == nullptr);
  dynrt::Tensor owned(t, [](DLManagedTensor *p) { p->deleter(p); });
  CHECK(t->dl_tensor.device.device_type == kDLCPU);
  HostTensor src = makeTensor({2, 3}, 7), back({2, 3}, 0.f);
  DLTensor sv = src.view(), bv = back.view();
  REQUIRE(dynrt_model_copy_tensor(model.get(), &sv, &t->dl_tensor) == nullptr);
  REQUIRE(dynrt_model_copy_tensor(model.get(), &t->dl_tensor, &bv) == nullptr);
  CHECK(back.data == src.data);

  HostTensor other({3, 2}, 0.f);
  DLTensor ov = other.view();
  CHECK(errorOf(dynrt_model_copy_tensor(model.get(), &sv, &ov)) ==
        "dynrt_model_copy_tensor: the tensors differ in dtype or shape");
  DLManagedTensor *none = nullptr;
  CHECK(errorOf(dynrt_model_alloc_tensor(model.get(), {kDLFloat, 24, 1}, 2,
                                         shape, &none)) ==
        "dynrt_model_alloc_tensor: unknown DLPack dtype (code 2, 24 bits)");
  CHECK(none == nullptr);
}
