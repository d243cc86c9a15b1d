//===- guards.cpp - checking a variant's inputs and guards ----------------===//
#include "guards.h"

#include <algorithm>

namespace dynrt {
namespace {
std::string list(const int64_t *v, int n) {
  std::string s = "[";
  for (int i = 0; i < n; ++i)
    s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

/// Checks dtype, rank and the non-negative entries of `sizes` (-1: dynamic).
/// Returns the failed condition, or an empty string.
std::string checkMeta(const DLTensor &t, int deviceType, DType dtype,
                      const std::vector<int64_t> &sizes) {
  if (t.device.device_type != deviceType)
    return std::string("device.type == ") +
           (deviceType == kDLCUDA ? "cuda" : "cpu") +
           ", got DLPack device type " +
           std::to_string(int(t.device.device_type));
  auto got = dtypeFromDLPack(t.dtype);
  if (!got || *got != dtype)
    return "dtype == " + std::string(dtypeInfo(dtype).torchName) + ", got " +
           (got ? std::string(dtypeInfo(*got).torchName)
                : std::string("an unsupported dtype"));
  if (t.ndim != (int)sizes.size())
    return "dim() == " + std::to_string(sizes.size()) + ", got " +
           std::to_string(t.ndim);
  for (int d = 0; d < t.ndim; ++d)
    if (sizes[d] >= 0 && t.shape[d] != sizes[d])
      return "size()[" + std::to_string(d) +
             "] == " + std::to_string(sizes[d]) + ", got " +
             std::to_string(t.shape[d]);
  for (int d = 0; d < t.ndim; ++d)
    if (t.shape[d] < 0)
      return "size()[" + std::to_string(d) + "] >= 0, got " +
             std::to_string(t.shape[d]);
  if (!t.data && t.ndim > 0 &&
      std::none_of(t.shape, t.shape + t.ndim, [](int64_t d) { return d == 0; }))
    return "data != NULL";
  // Generated kernels read inputs densely in row-major order.
  if (!isContiguous(t))
    return "is_contiguous(), got strides " + list(t.strides, t.ndim);
  return "";
}
/// How a failed condition on an input reads: Dynamo-style sources as
/// `L['x'].size()[0] == 4`, plain names as `input 'x': size()[0] == 4`.
std::string onInput(const std::string &name, const std::string &what) {
  if (name.find('[') != std::string::npos)
    return name + "." + what;
  return "input '" + name + "': " + what;
}

/// A size guard; on failure, names it and the sizes it read.
bool checkSizeGuard(const Guard &g, const DLTensor *const *inputs,
                    std::string &failure) {
  int64_t v = g.constant;
  std::string sizes;
  for (size_t k = 0; k < g.terms.size(); k += 3) {
    const DLTensor &t = *inputs[g.terms[k]];
    if (t.ndim <= g.terms[k + 1]) {
      failure = "guard failed: " + g.text + " (input " +
                std::to_string(g.terms[k]) + " has " + std::to_string(t.ndim) +
                " dims)";
      return false;
    }
    int64_t size = t.shape[g.terms[k + 1]], term;
    // A coefficient times a size past int64 has no value the guard could
    // compare: the guard fails, saying so.
    if (__builtin_mul_overflow(g.terms[k + 2], size, &term) ||
        __builtin_add_overflow(v, term, &v)) {
      failure =
          "guard failed: " + g.text + " (its sum overflows 64 bits at input " +
          std::to_string(g.terms[k]) + " size()[" +
          std::to_string(g.terms[k + 1]) + "] = " + std::to_string(size) + ")";
      return false;
    }
    sizes += (k ? ", input " : "input ") + std::to_string(g.terms[k]) +
             " size()[" + std::to_string(g.terms[k + 1]) +
             "] = " + std::to_string(size);
  }
  bool ok = g.op == "<"    ? v < 0
            : g.op == "<=" ? v <= 0
            : g.op == "==" ? v == 0
            : g.op == "!=" ? v != 0
            : g.op == ">"  ? v > 0
                           : v >= 0;
  if (!ok)
    failure = "guard failed: " + g.text + " (" + sizes + ")";
  return ok;
}
} // namespace

bool isContiguous(const DLTensor &t) {
  if (!t.strides)
    return true;
  for (int d = 0; d < t.ndim; ++d)
    if (t.shape[d] == 0)
      return true; // no elements: any strides describe them

  int64_t expect = 1;
  for (int d = t.ndim - 1; d >= 0; --d) {
    if (t.shape[d] != 1 && t.strides[d] != expect)
      return false;
    if (__builtin_mul_overflow(expect, t.shape[d], &expect))
      return false; // no dense tensor has that many elements
  }
  return true;
}

bool checkSignature(const GraphSpec &graph, const DLTensor *const *inputs,
                    std::string &failure) {
  for (size_t i = 0; i < graph.numUserInputs; ++i) {
    const TensorSpec &spec = graph.inputs[i];
    std::string what =
        checkMeta(*inputs[i], graph.deviceType, spec.dtype, spec.shape);
    if (!what.empty()) {
      failure = "input " + std::to_string(i) + " does not fit graph '" +
                graph.name + "': " + onInput(spec.name, what);
      return false;
    }
  }
  return true;
}

bool checkGuards(const GraphSpec &graph, const DLTensor *const *inputs,
                 std::string &failure) {
  for (const Guard &g : graph.guards) {
    if (g.kind == "size") {
      if (!checkSizeGuard(g, inputs, failure))
        return false;
      continue;
    }
    if (g.kind != "tensor_match")
      continue; // global-state and value guards were checked at capture time
    std::string what =
        checkMeta(*inputs[g.input], graph.deviceType, g.dtype, g.sizes);
    if (!what.empty()) {
      failure = "guard failed: " + onInput(graph.inputs[g.input].name, what) +
                " (guard: " + g.text + ")";
      return false;
    }
  }
  return true;
}

} // namespace dynrt
