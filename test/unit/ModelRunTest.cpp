//===- ModelRunTest.cpp - libdynrt running real models --------------------===//
#include "ModelFixtures.h"

#include "dynrt/dynrt.hpp"
#include "dynrt/safetensors.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>

using fixtures::HostTensor;
using fixtures::makeTensor;

namespace {
float maxRelDiff(const float *got, const std::vector<float> &want) {
  double maxAbs = 0, maxRef = 1e-30;
  for (size_t i = 0; i < want.size(); ++i) {
    maxAbs = std::max(maxAbs, (double)std::fabs(got[i] - want[i]));
    maxRef = std::max(maxRef, (double)std::fabs(want[i]));
  }
  return float(maxAbs / maxRef);
}

std::string errorOf(dynrt_status_t *s) {
  REQUIRE(s != nullptr);
  std::string msg = dynrt_status_message(s);
  dynrt_status_free(s);
  return msg;
}

void copyFile(const std::string &from, const std::string &to, size_t keep) {
  std::ifstream in(from, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)),
                    std::istreambuf_iterator<char>());
  std::ofstream(to, std::ios::binary) << bytes.substr(0, keep);
}

std::string fileText(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)),
                     std::istreambuf_iterator<char>());
}
} // namespace

TEST_CASE("a dynamic batch dim is resolved from the inputs on every call") {
  dynrt::Model model(fixtures::buildModel("dyn_mlp", "dyn_mlp"));
  dynrt::Context context(model);
  for (int64_t batch : {1, 3, 17, 64, 0}) {
    CAPTURE(batch);
    HostTensor x = makeTensor({batch, 16}, 1), y = makeTensor({batch, 8}, 2);
    DLTensor xv = x.view(), yv = y.view();
    auto outs = context.run({&xv, &yv});
    REQUIRE(outs.size() == 1);
    const DLTensor &o = outs[0]->dl_tensor;
    REQUIRE(o.ndim == 2);
    CHECK(o.shape[0] == batch);
    CHECK(o.shape[1] == 8);
    CHECK(maxRelDiff(static_cast<float *>(o.data),
                     fixtures::dynMlpReference(x, y)) < 1e-5f);
  }
}

TEST_CASE("outputs go into caller-provided buffers") {
  dynrt::Model model(fixtures::buildModel("dyn_mlp", "dyn_mlp"));
  dynrt::Context context(model);
  HostTensor x = makeTensor({5, 16}, 3), y = makeTensor({5, 8}, 4);
  DLTensor xv = x.view(), yv = y.view();
  std::vector<const DLTensor *> inputs = {&xv, &yv};

  int64_t shape[2] = {0, 0};
  int64_t *shapes[] = {shape};
  REQUIRE(dynrt_model_output_ndim(model.get(), 0) == 2);
  dynrt_context_t *raw = nullptr;
  REQUIRE(dynrt_context_create(model.get(), {kDLCPU, 0}, nullptr, &raw) ==
          nullptr);
  REQUIRE(dynrt_context_output_shapes(raw, inputs.data(), 2, shapes, 1) ==
          nullptr);
  CHECK(shape[0] == 5);
  CHECK(shape[1] == 8);

  HostTensor out = makeTensor({5, 8}, 0);
  DLTensor ov = out.view();
  REQUIRE(dynrt_context_run_into(raw, inputs.data(), 2,
                                 std::vector<const DLTensor *>{&ov}.data(),
                                 1) == nullptr);
  CHECK(maxRelDiff(out.data.data(), fixtures::dynMlpReference(x, y)) < 1e-5f);

  HostTensor wrong = makeTensor({4, 8}, 0);
  DLTensor wv = wrong.view();
  const DLTensor *wp[] = {&wv};
  CHECK(errorOf(dynrt_context_run_into(raw, inputs.data(), 2, wp, 1)) ==
        "output 0 ('output_0'): buffer has shape [4, 8], the model computes "
        "[5, 8]");
  wv = ov;
  wv.dtype = {kDLInt, 64, 1};
  CHECK(errorOf(dynrt_context_run_into(raw, inputs.data(), 2, wp, 1)) ==
        "output 0 ('output_0'): buffer must be float32");
  const DLTensor *nullOut[] = {nullptr};
  CHECK(errorOf(dynrt_context_run_into(raw, inputs.data(), 2, nullOut, 1)) ==
        "output 0 ('output_0'): buffer is null");
  dynrt_context_release(raw);
}

TEST_CASE("inputs that do not fit are named errors, not wrong results") {
  dynrt::Model model(fixtures::buildModel("dyn_mlp", "dyn_mlp"));
  HostTensor x = makeTensor({5, 16}, 1), y = makeTensor({4, 8}, 2);
  DLTensor xv = x.view(), yv = y.view();
  // Batch dims 5 and 4 cannot broadcast: the model's shape function says
  // where.
  dynrt::Context context(model);
  try {
    context.run({&xv, &yv});
    FAIL("expected an error");
  } catch (const dynrt::Error &e) {
    CHECK(e.code() == DYNRT_INVALID_ARGUMENT);
    CHECK_THAT(e.what(),
               Catch::StartsWith("graph 'dyn_mlp': aten.add.Tensor at loc(") &&
                   Catch::EndsWith(":15:10): the operands do not broadcast "
                                   "in dim 0"));
  }
  HostTensor bad = makeTensor({5, 12}, 1);
  DLTensor bv = bad.view();
  CHECK_THROWS_WITH(
      context.run({&bv, &yv}),
      "guard failed: input 'x': size()[1] == 16, got 12 (guard: "
      "check_tensor(L['x'], torch.float32, device='cpu', requires_grad=False, "
      "size=[None, 16], stride=[16, 1]))");
  // A transposed (non-contiguous) input.
  int64_t strides[2] = {1, 5};
  DLTensor tv = xv;
  tv.strides = strides;
  CHECK_THROWS_WITH(context.run({&tv, &yv}),
                    Catch::Contains("is_contiguous(), got strides [1, 5]"));
  // Wrong counts.
  CHECK_THROWS_WITH(context.run({&xv}), "model takes 2 inputs, got 1");
}

TEST_CASE("a model with several variants runs the first whose guards pass") {
  dynrt::Model model(fixtures::buildModel("variants", "variants"));
  dynrt::Context context(model);
  HostTensor four = makeTensor({4, 3}, 5), two = makeTensor({2, 3}, 6),
             three = makeTensor({3, 3}, 7);
  DLTensor fv = four.view(), tv = two.view(), hv = three.view();
  auto a = context.run({&fv});
  auto b = context.run({&tv});
  CHECK(static_cast<float *>(a[0]->dl_tensor.data)[7] == four.data[7] * 2.f);
  CHECK(static_cast<float *>(b[0]->dl_tensor.data)[5] == two.data[5] * 3.f);
  CHECK_THROWS_WITH(
      context.run({&hv}),
      "guard failed: input 'x': size()[0] == 4, got 3 (guard: "
      "check_tensor(L['x'], torch.float32, device='cpu', requires_grad=False, "
      "size=[4, 3], stride=[3, 1]))");
}

TEST_CASE("embedded weights need no sidecar") {
  std::string so =
      fixtures::buildModel("dyn_mlp", "dyn_mlp_embedded", "--embed-weights");
  CHECK_FALSE(std::ifstream(
      fixtures::tempPath("dyn_mlp_embedded.weights.safetensors")));
  dynrt::Model model(so);
  CHECK(model.manifest().find("\"weights_embedded\": true") !=
        std::string::npos);
  HostTensor x = makeTensor({2, 16}, 8), y = makeTensor({2, 8}, 9);
  DLTensor xv = x.view(), yv = y.view();
  auto outs = model.run({&xv, &yv});
  CHECK(maxRelDiff(static_cast<float *>(outs[0]->dl_tensor.data),
                   fixtures::dynMlpReference(x, y)) < 1e-5f);
}

TEST_CASE("corrupted models and weights are clear errors") {
  std::string so = fixtures::buildModel("dyn_mlp", "dyn_mlp");
  std::string weights = fixtures::tempPath("dyn_mlp.weights.safetensors");
  dynrt_model_t *m = nullptr;

  SECTION("a truncated .so") {
    std::string cut = fixtures::tempPath("cut.so");
    copyFile(so, cut, fileText(so).size() / 2);
    CHECK(errorOf(dynrt_model_load(cut.c_str(), &m)) ==
          "cannot load model '" + cut +
              "': corrupted: its section headers lie outside the file "
              "(truncated?)");
    copyFile(so, cut, 100);
    CHECK(errorOf(dynrt_model_load(cut.c_str(), &m)) ==
          "cannot load model '" + cut +
              "': corrupted: its program headers lie outside the file "
              "(truncated?)");
    CHECK(m == nullptr);
  }
  SECTION("a missing or truncated weights file") {
    std::string dir = fixtures::tempPath("w1");
    REQUIRE(std::system(("mkdir -p " + dir).c_str()) == 0);
    copyFile(so, dir + "/dyn_mlp.so", std::string::npos);
    CHECK(errorOf(dynrt_model_load((dir + "/dyn_mlp.so").c_str(), &m)) ==
          "cannot open weights file '" + dir +
              "/dyn_mlp.weights.safetensors': No such file or directory");
    copyFile(weights, dir + "/dyn_mlp.weights.safetensors", 300);
    CHECK_THAT(errorOf(dynrt_model_load((dir + "/dyn_mlp.so").c_str(), &m)),
               Catch::StartsWith("weights file '" + dir +
                                 "/dyn_mlp.weights.safetensors' is corrupted"));
  }
  SECTION("weights that do not match the manifest") {
    std::string dir = fixtures::tempPath("w2");
    REQUIRE(std::system(("mkdir -p " + dir).c_str()) == 0);
    copyFile(so, dir + "/dyn_mlp.so", std::string::npos);
    float data[8 * 4] = {};
    std::map<std::string, dynrt::TensorView> tensors;
    tensors["fc.weight"] = {dynrt::DType::F32,
                            {8, 4},
                            reinterpret_cast<uint8_t *>(data),
                            sizeof(data)};
    tensors["fc.bias"] = {dynrt::DType::F32,
                          {8},
                          reinterpret_cast<uint8_t *>(data),
                          8 * sizeof(float)};
    std::string error;
    REQUIRE(dynrt::writeSafetensors(dir + "/dyn_mlp.weights.safetensors",
                                    tensors, error));
    // As the sidecar, the file is not the one the model was built with.
    CHECK_THAT(errorOf(dynrt_model_load((dir + "/dyn_mlp.so").c_str(), &m)),
               Catch::StartsWith("weights file '" + dir +
                                 "/dyn_mlp.weights.safetensors' is not the "
                                 "one model '" +
                                 dir + "/dyn_mlp.so' was built with"));
    // Given as other weights, its tensors are checked against the manifest.
    CHECK(errorOf(dynrt_model_load_with_weights(
              (dir + "/dyn_mlp.so").c_str(),
              (dir + "/dyn_mlp.weights.safetensors").c_str(), &m)) ==
          "weights of model '" + dir +
              "/dyn_mlp.so': tensor 'fc.weight' does not match the "
              "manifest's dtype/shape");
  }
  SECTION("a model of another ABI version") {
    std::string src = fixtures::tempPath("abi.cpp"),
                lib = fixtures::tempPath("abi.so");
    std::ofstream(src) << "extern \"C\" const char *dynoc_model_manifest() "
                          "{ return \"{}\"; }\n"
                          "extern \"C\" int dynoc_model_abi_version() "
                          "{ return 99; }\n";
    REQUIRE(std::system(("c++ -shared -fPIC " + src + " -o " + lib).c_str()) ==
            0);
    CHECK(errorOf(dynrt_model_load(lib.c_str(), &m)) ==
          "model '" + lib +
              "' has ABI version 99; this runtime reads 3 (CPU) and 4 (rebuild "
              "it with this dynoc)");
  }
}

TEST_CASE("a context is for the device the model was built for") {
  dynrt::Model model(fixtures::buildModel("dyn_mlp", "dyn_mlp"));
  dynrt_context_t *c = nullptr;
  CHECK(errorOf(dynrt_context_create(model.get(), {kDLCUDA, 0}, nullptr, &c)) ==
        "model '" + fixtures::tempPath("dyn_mlp.so") +
            "' was built for the CPU; it cannot run on DLPack device type 2");
  CHECK(c == nullptr);
  CHECK(errorOf(dynrt_context_run(nullptr, nullptr, 0, nullptr, 0)) ==
        "dynrt_context_run: null argument");
  CHECK(errorOf(dynrt_context_run_into(nullptr, nullptr, 0, nullptr, 0)) ==
        "dynrt_context_run_into: null argument");
  CHECK(errorOf(dynrt_context_output_shapes(nullptr, nullptr, 0, nullptr, 0)) ==
        "dynrt_context_output_shapes: null argument");
}
