//===- FunctionsTest.cpp - a bundled model's functions --------------------===//
//
// test/models/train_{forward,backward,update}.mlir built into one model
// (`dynoc build A B C`): a forward keeping its saved value in the context,
// its backward from a gradient seed, and an SGD update whose write-back the
// next forward reads, against the same step computed here.
//
//===----------------------------------------------------------------------===//
#include "ModelFixtures.h"

#include "dynrt/dynrt.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

using fixtures::HostTensor;
using fixtures::makeTensor;

namespace {
std::string bundle() {
  return fixtures::buildModel("train_forward", "train_bundle",
                              fixtures::graphPath("train_backward") + " " +
                                  fixtures::graphPath("train_update"));
}

std::vector<float> values(const DLTensor *d) {
  size_t n = 1;
  for (int i = 0; i < d->ndim; ++i)
    n *= size_t(d->shape[i]);
  const float *p = static_cast<const float *>(d->data);
  return std::vector<float>(p, p + n);
}

std::string errorOf(dynrt_status_t *s) {
  REQUIRE(s != nullptr);
  std::string m = dynrt_status_message(s);
  dynrt_status_free(s);
  return m;
}

/// fc.bias of dyn_mlp.safetensors (test/models/make_weights.py).
std::vector<float> initialBias() {
  std::vector<float> b(8);
  for (int i = 0; i < 8; ++i)
    b[i] = 0.05f * i - 0.2f;
  return b;
}
} // namespace

TEST_CASE("a bundled model runs forward, backward and update by name") {
  dynrt::Model model(bundle());
  CHECK(model.functions() ==
        std::vector<std::string>{"graph_0", "graph_1", "graph_2"});
  CHECK(model.functionInputs("graph_1") ==
        std::vector<std::string>{"grad(graph_0.output_0)", "L['x']"});
  CHECK(model.functionInputs("graph_2").empty());
  CHECK(model.numInputs() == 2); // dynrt_model_run runs the first function

  HostTensor x = makeTensor({4, 8}, 1), t = makeTensor({4, 8}, 2);
  HostTensor seed({}, 1.f);
  DLTensor xv = x.view(), tv = t.view(), sv = seed.view();
  std::vector<float> b = initialBias();
  dynrt::Context ctx(model);
  for (int step = 0; step < 3; ++step) {
    // The same step, here: loss, gradient, SGD with lr 0.1.
    double loss = 0;
    std::vector<double> grad(8, 0.0);
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 8; ++j) {
        double d = double(x.data[i * 8 + j]) * b[j] - t.data[i * 8 + j];
        loss += d * d;
        grad[j] += 2 * d * x.data[i * 8 + j];
      }
    auto fwd = ctx.call("graph_0", {&xv, &tv});
    REQUIRE(fwd.size() == 2);
    CHECK(values(fwd[0])[0] == Approx(loss).epsilon(1e-5));
    auto bwd = ctx.call("graph_1", {&sv, &xv});
    std::vector<float> g = values(bwd[0]);
    for (int j = 0; j < 8; ++j)
      CHECK(g[j] == Approx(grad[j]).epsilon(1e-5).margin(1e-6));
    auto upd = ctx.call("graph_2", {});
    for (int j = 0; j < 8; ++j)
      b[j] = float(b[j] - 0.1 * grad[j]);
    std::vector<float> nb = values(upd[0]);
    for (int j = 0; j < 8; ++j)
      CHECK(nb[j] == Approx(b[j]).epsilon(1e-5).margin(1e-6));
  }
  // The update's write-back is the model's fc.bias now.
  dynrt::Tensor w = model.readWeight("fc.bias");
  std::vector<float> now = values(&w->dl_tensor);
  for (int j = 0; j < 8; ++j)
    CHECK(now[j] == Approx(b[j]).epsilon(1e-5).margin(1e-6));
}

TEST_CASE("a function's misuse is a named error") {
  dynrt::Model model(bundle());
  dynrt::Context ctx(model);
  dynrt_context_t *c = nullptr;
  REQUIRE(dynrt_context_create(model.get(), {kDLCPU, 0}, nullptr, &c) ==
          nullptr);
  HostTensor seed({}, 1.f), x = makeTensor({4, 8}, 1);
  DLTensor sv = seed.view(), xv = x.view();
  const DLTensor *in[] = {&sv, &xv};
  const DLTensor *out[1];
  // The backward before any forward on this context.
  CHECK_THAT(errorOf(dynrt_context_call(c, "graph_1", in, 2, out, 1)),
             Catch::Contains("function 'graph_1' reads 'graph_0.output_1': "
                             "call 'graph_0' on this context first"));
  CHECK_THAT(errorOf(dynrt_context_call(c, "graph_1", in, 1, out, 1)),
             Catch::Contains("function 'graph_1' takes 2 inputs "
                             "(grad(graph_0.output_0), L['x']), got 1"));
  std::string unknown =
      errorOf(dynrt_context_call(c, "graph_7", in, 2, out, 1));
  CHECK_THAT(unknown, Catch::Contains("has no function 'graph_7' (it has "
                                      "'graph_0', 'graph_1', 'graph_2')"));
  size_t ni = 0, no = 0;
  dynrt_status_t *s = dynrt_model_function_arity(model.get(), "nope", &ni, &no);
  REQUIRE(s != nullptr);
  CHECK(dynrt_status_code(s) == DYNRT_NOT_FOUND);
  dynrt_status_free(s);
  CHECK(dynrt_model_function_name(model.get(), 3) == nullptr);
  CHECK(dynrt_model_function_input_name(model.get(), "graph_1", 2) == nullptr);
  dynrt_context_release(c);
}

TEST_CASE("a model of one graph has one function, named \"\"") {
  dynrt::Model model(fixtures::buildModel("dyn_mlp", "dyn_mlp"));
  CHECK(model.functions() == std::vector<std::string>{""});
  CHECK(model.functionInputs("").size() == 2);
}
