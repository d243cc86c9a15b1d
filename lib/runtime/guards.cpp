//===- guards.cpp - checking a variant's guards on run inputs -------------===//
#include "guards.h"

namespace dynrt {
namespace {
std::string list(const int64_t *v, int n) {
  std::string s = "[";
  for (int i = 0; i < n; ++i)
    s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}
} // namespace

bool checkGuards(const GraphSpec &graph, const DLTensor *const *inputs,
                 std::string &failure) {
  for (const Guard &g : graph.guards) {
    if (g.kind != "tensor_match")
      continue; // global-state guards were checked at capture time
    const DLTensor *t = inputs[g.input];
    const std::string &name = graph.inputs[g.input].name;
    auto fail = [&](const std::string &what) {
      failure = "guard failed: " + g.text + " (" + what + ")";
      return false;
    };
    if (t->device.device_type != kDLCPU)
      return fail(name + " is not on the CPU");
    auto dtype = dtypeFromDLPack(t->dtype);
    if (!dtype || *dtype != g.dtype)
      return fail(name + ".dtype == " +
                  std::string(dtypeInfo(g.dtype).torchName) + ", got " +
                  (dtype ? std::string(dtypeInfo(*dtype).torchName)
                         : std::string("an unsupported dtype")));
    if (t->ndim != (int)g.sizes.size())
      return fail(name + ".dim() == " + std::to_string(g.sizes.size()) +
                  ", got " + std::to_string(t->ndim));
    for (int d = 0; d < t->ndim; ++d)
      if (g.sizes[d] >= 0 && t->shape[d] != g.sizes[d])
        return fail(name + ".size()[" + std::to_string(d) +
                    "] == " + std::to_string(g.sizes[d]) + ", got " +
                    std::to_string(t->shape[d]));
    if (t->strides) {
      // Generated kernels read inputs densely in row-major order.
      int64_t expect = 1;
      for (int d = t->ndim - 1; d >= 0; --d) {
        if (t->shape[d] != 1 && t->strides[d] != expect)
          return fail(name + " must be contiguous, got strides " +
                      list(t->strides, t->ndim));
        expect *= t->shape[d];
      }
    }
  }
  return true;
}

} // namespace dynrt
