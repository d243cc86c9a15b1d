//===- WeightsTest.cpp - libdynrt's weight accessors and checkpoints ------===//
#include "ModelFixtures.h"

#include "dynrt/dynrt.hpp"
#include "dynrt/safetensors.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>

using fixtures::HostTensor;
using fixtures::makeTensor;

namespace {
std::vector<float> values(const dynrt::Tensor &t) {
  const DLTensor &d = t->dl_tensor;
  size_t n = 1;
  for (int i = 0; i < d.ndim; ++i)
    n *= size_t(d.shape[i]);
  const float *p = static_cast<const float *>(d.data);
  return std::vector<float>(p, p + n);
}

std::vector<float> run(dynrt::Model &model, HostTensor &x, HostTensor &y) {
  DLTensor xv = x.view(), yv = y.view();
  return values(model.run({&xv, &yv})[0]);
}

std::string errorOf(dynrt_status_t *s) {
  REQUIRE(s != nullptr);
  std::string msg = dynrt_status_message(s);
  dynrt_status_free(s);
  return msg;
}
} // namespace

TEST_CASE("weights are listed, read and written by name") {
  dynrt::Model model(fixtures::buildModel("dyn_mlp", "dyn_mlp_weights"));
  auto names = model.weightNames();
  CHECK(names == std::vector<std::string>{"fc.weight", "fc.bias"});
  auto bias = model.readWeight("fc.bias");
  REQUIRE(bias->dl_tensor.ndim == 1);
  CHECK(bias->dl_tensor.shape[0] == 8);
  CHECK(values(bias)[2] == Approx(0.05f * 2 - 0.2f));

  // fc.weight = 0, fc.bias = 0.5: the output is relu(0.5) + y. The model
  // precomputes from fc.weight at load (its transpose); a write recomputes.
  HostTensor x = makeTensor({3, 16}, 1), y = makeTensor({3, 8}, 2);
  HostTensor zeros({8, 16}, 0.f), half({8}, 0.5f);
  DLTensor zv = zeros.view(), hv = half.view();
  model.writeWeight("fc.weight", zv);
  model.writeWeight("fc.bias", hv);
  std::vector<float> out = run(model, x, y);
  for (size_t i = 0; i < out.size(); ++i)
    CHECK(out[i] == Approx(0.5f + y.data[i]));
  CHECK(values(model.readWeight("fc.bias"))[0] == 0.5f);
}

TEST_CASE("writing a weight recomputes what the model precomputed from it") {
  // scaled_bias computes fc.bias * 2 once at load (a prepared input).
  dynrt::Model model(fixtures::buildModel("scaled_bias", "scaled_bias"));
  HostTensor x({2, 8}, 1.f), bias({8}, 3.f);
  DLTensor xv = x.view(), bv = bias.view();
  CHECK(values(model.run({&xv})[0])[1] == Approx(2 * (0.05f - 0.2f)));
  model.writeWeight("fc.bias", bv);
  for (float v : values(model.run({&xv})[0]))
    CHECK(v == 6.f);
}

TEST_CASE("a checkpoint restores the weights it saved") {
  std::string so = fixtures::buildModel("dyn_mlp", "dyn_mlp_weights");
  std::string ckpt = fixtures::tempPath("dyn_mlp_ckpt.safetensors");
  HostTensor x = makeTensor({4, 16}, 3), y = makeTensor({4, 8}, 4);
  std::vector<float> want;
  {
    dynrt::Model trained(so);
    HostTensor bias({8}, 0.25f);
    DLTensor bv = bias.view();
    trained.writeWeight("fc.bias", bv);
    want = run(trained, x, y);
    trained.saveWeights(ckpt);
  }
  dynrt::Model fresh(so);
  CHECK(run(fresh, x, y) != want);
  fresh.loadWeights(ckpt);
  CHECK(run(fresh, x, y) == want);
}

TEST_CASE("bad weight names, values and checkpoints are named errors") {
  dynrt::Model model(fixtures::buildModel("dyn_mlp", "dyn_mlp_weights"));
  DLManagedTensor *t = nullptr;
  dynrt_status_t *s = dynrt_model_read_weight(model.get(), "fc.nope", &t);
  REQUIRE(s != nullptr);
  CHECK(dynrt_status_code(s) == DYNRT_NOT_FOUND);
  CHECK_THAT(errorOf(s), Catch::Contains("no weight named 'fc.nope'"));

  HostTensor wrong({4}, 1.f);
  DLTensor wv = wrong.view();
  CHECK_THAT(errorOf(dynrt_model_write_weight(model.get(), "fc.bias", &wv)),
             Catch::Contains("weight 'fc.bias' has shape [8]; the value has "
                             "[4]"));

  std::string missing = fixtures::tempPath("no_such_ckpt.safetensors");
  CHECK(errorOf(dynrt_model_load_weights(model.get(), missing.c_str()))
            .find("no_such_ckpt.safetensors") != std::string::npos);

  // A checkpoint of another model: nothing of it is written.
  std::string other = fixtures::tempPath("other_ckpt.safetensors");
  std::map<std::string, dynrt::TensorView> tensors;
  std::vector<float> bytes(8, 7.f);
  tensors["fc.bias"] = {dynrt::DType::F32,
                        {8},
                        reinterpret_cast<const uint8_t *>(bytes.data()),
                        32};
  tensors["encoder.weight"] = tensors["fc.bias"];
  std::string error;
  REQUIRE(dynrt::writeSafetensors(other, tensors, error));
  CHECK_THAT(errorOf(dynrt_model_load_weights(model.get(), other.c_str())),
             Catch::Contains("holds 'encoder.weight', which is no weight"));
  CHECK(values(model.readWeight("fc.bias"))[0] != 7.f);
}

TEST_CASE("a bound weight is read in the caller's memory, without a copy") {
  // scaled_bias computes fc.bias * 2 at load (a prepared input): binding
  // recomputes it, and binding again after a change in place does too.
  dynrt::Model model(fixtures::buildModel("scaled_bias", "scaled_bias"));
  HostTensor x({2, 8}, 1.f), bias({8}, 3.f);
  DLTensor xv = x.view(), bv = bias.view();
  model.bindWeight("fc.bias", bv);
  for (float v : values(model.run({&xv})[0]))
    CHECK(v == 6.f);
  std::fill(bias.data.begin(), bias.data.end(), -1.f);
  REQUIRE(dynrt_model_bind_weight(model.get(), "fc.bias", &bv) == nullptr);
  for (float v : values(model.run({&xv})[0]))
    CHECK(v == -2.f);
  CHECK(values(model.readWeight("fc.bias"))[3] == -1.f);

  HostTensor wrong({4}, 1.f);
  DLTensor wv = wrong.view();
  CHECK_THAT(errorOf(dynrt_model_bind_weight(model.get(), "fc.bias", &wv)),
             Catch::Contains("weight 'fc.bias' has shape [8]"));
  CHECK_THAT(errorOf(dynrt_model_bind_weight(model.get(), "nope", &bv)),
             Catch::Contains("no weight named 'nope'"));
  CHECK_THAT(errorOf(dynrt_model_bind_weight(nullptr, "fc.bias", &bv)),
             Catch::Contains("null argument"));
}

TEST_CASE("a model loads with another weights file, checked against its "
          "manifest") {
  std::string so = fixtures::buildModel("dyn_mlp", "dyn_mlp_weights");
  HostTensor x = makeTensor({2, 16}, 5), y = makeTensor({2, 8}, 6);
  std::string tuned = fixtures::tempPath("dyn_mlp_tuned.safetensors");
  {
    dynrt::Model model(so);
    HostTensor bias({8}, 0.75f);
    DLTensor bv = bias.view();
    model.writeWeight("fc.bias", bv);
    model.saveWeights(tuned);
  }
  dynrt::Model original(so), loaded(so, tuned);
  std::vector<float> a = run(original, x, y), b = run(loaded, x, y);
  REQUIRE(a.size() == b.size());
  CHECK(a != b);
  CHECK(values(loaded.readWeight("fc.bias"))[3] == 0.75f);

  // A file with a tensor the model does not read, or lacking one it reads.
  std::string extra = fixtures::tempPath("dyn_mlp_extra.safetensors");
  std::string partial = fixtures::tempPath("dyn_mlp_partial.safetensors");
  {
    std::vector<float> w(8 * 16, 0.f), b(8, 0.f), z(3, 0.f);
    auto view = [](std::vector<float> &v, std::vector<int64_t> shape) {
      return dynrt::TensorView{dynrt::DType::F32, std::move(shape),
                               reinterpret_cast<const uint8_t *>(v.data()),
                               v.size() * sizeof(float)};
    };
    std::map<std::string, dynrt::TensorView> all = {
        {"fc.weight", view(w, {8, 16})},
        {"fc.bias", view(b, {8})},
        {"head.bias", view(z, {3})}};
    std::string error;
    REQUIRE(dynrt::writeSafetensors(extra, all, error));
    all.erase("head.bias");
    all.erase("fc.weight");
    REQUIRE(dynrt::writeSafetensors(partial, all, error));
  }
  dynrt_model_t *m = nullptr;
  CHECK(errorOf(dynrt_model_load_with_weights(so.c_str(), extra.c_str(), &m)) ==
        "weights file '" + extra +
            "' holds 'head.bias', which is no weight of model '" + so + "'");
  CHECK(errorOf(dynrt_model_load_with_weights(so.c_str(), partial.c_str(), &m))
            .find("lack tensor 'fc.weight'") != std::string::npos);
  CHECK(m == nullptr);
}

TEST_CASE("a model loads from memory, with its weights linked in or given") {
  std::string embedded =
      fixtures::buildModel("dyn_mlp", "dyn_mlp_embedded", "--embed-weights");
  std::string sidecar = fixtures::buildModel("dyn_mlp", "dyn_mlp_weights");
  auto bytesOf = [](const std::string &path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  HostTensor x = makeTensor({3, 16}, 7), y = makeTensor({3, 8}, 8);
  std::vector<float> want = fixtures::dynMlpReference(x, y);
  {
    std::string bytes = bytesOf(embedded);
    dynrt::Model model = dynrt::Model::fromMemory(bytes.data(), bytes.size());
    bytes.assign(bytes.size(), '\0'); // the caller's copy may go at once
    std::vector<float> got = run(model, x, y);
    for (size_t i = 0; i < want.size(); ++i)
      CHECK(got[i] == Approx(want[i]).margin(1e-5));
  }
  std::string bytes = bytesOf(sidecar);
  dynrt_model_t *m = nullptr;
  CHECK(errorOf(dynrt_model_load_from_memory(bytes.data(), bytes.size(),
                                             nullptr, &m))
            .find("a model from memory has no file beside it") !=
        std::string::npos);
  std::string weights =
      sidecar.substr(0, sidecar.size() - 3) + ".weights.safetensors";
  dynrt::Model model =
      dynrt::Model::fromMemory(bytes.data(), bytes.size(), weights);
  std::vector<float> got = run(model, x, y);
  for (size_t i = 0; i < want.size(); ++i)
    CHECK(got[i] == Approx(want[i]).margin(1e-5));
  std::string junk = "not an ELF file";
  CHECK(errorOf(dynrt_model_load_from_memory(junk.data(), junk.size(), nullptr,
                                             &m)) ==
        "cannot load model '<memory>': not an ELF file");
}

TEST_CASE("a weights sidecar changed or replaced after the build is refused "
          "by name") {
  std::string so = fixtures::buildModel("dyn_mlp", "dyn_mlp_digest");
  std::string sidecar = so.substr(0, so.size() - 3) + ".weights.safetensors";
  std::string original;
  {
    std::ifstream f(sidecar, std::ios::binary);
    REQUIRE(f);
    original.assign(std::istreambuf_iterator<char>(f), {});
  }
  { dynrt::Model intact(so); }

  // One weight's value changed: still a well-formed safetensors file.
  std::string changed = original;
  changed[changed.size() - 3] ^= 0x40;
  {
    std::ofstream f(sidecar, std::ios::binary | std::ios::trunc);
    f << changed;
  }
  dynrt_model_t *m = nullptr;
  dynrt_status_t *s = dynrt_model_load(so.c_str(), &m);
  REQUIRE(s != nullptr);
  CHECK(dynrt_status_code(s) == DYNRT_DATA_LOSS);
  std::string msg = errorOf(s);
  CHECK(msg.rfind("weights file '", 0) == 0);
  CHECK(msg.find(".weights.safetensors' is not the one model '" + so +
                 "' was built with (its digest is xxh64:") !=
        std::string::npos);
  CHECK(msg.find("it was changed or replaced after dynoc build") !=
        std::string::npos);
  CHECK(m == nullptr);

  // The same bytes given on purpose are other weights, not a damaged file.
  std::string given = fixtures::tempPath("dyn_mlp_digest_given.safetensors");
  {
    std::ofstream f(given, std::ios::binary);
    f << changed;
  }
  { dynrt::Model withOther(so, given); }

  // Restored, the model loads again.
  {
    std::ofstream f(sidecar, std::ios::binary | std::ios::trunc);
    f << original;
  }
  { dynrt::Model restored(so); }
}
