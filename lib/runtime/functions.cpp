//===- functions.cpp - a bundled model's functions, called by name --------===//
//
// dynrt_model_num_functions ... dynrt_context_call (dynrt.h): a model built
// from several graph files runs each as a function; a context keeps each
// function's last outputs, which later calls read where an input is named
// `graph_N.output_K` (a backward reading its forward's saved values, an
// update reading the backward's gradients).
//
//===----------------------------------------------------------------------===//
#include "model_internal.h"
#include "status.h"

#include <algorithm>
#include <cstring>

namespace {
using dynrt::guarded;
using dynrt::makeStatus;

/// The first variant's spec of `function`, or null.
const dynrt::GraphSpec *functionSpec(const dynrt_model_t &m,
                                     const std::string &function) {
  for (const dynrt::GraphSpec &g : m.manifest.graphs)
    if (g.function == function)
      return &g;
  return nullptr;
}

/// The model's function names, in build order.
std::vector<const std::string *> functionNames(const dynrt_model_t &m) {
  std::vector<const std::string *> names;
  for (const dynrt::GraphSpec &g : m.manifest.graphs)
    if (std::none_of(names.begin(), names.end(),
                     [&](const std::string *n) { return *n == g.function; }))
      names.push_back(&g.function);
  return names;
}

dynrt_status_t *unknownFunction(const dynrt_model_t &m, const char *function) {
  std::string names;
  for (const std::string *n : functionNames(m))
    names += (names.empty() ? "'" : ", '") + *n + "'";
  return makeStatus(DYNRT_NOT_FOUND, "model '" + m.path +
                                         "' has no function '" + function +
                                         "' (it has " + names + ")");
}

/// For an input named `graph_N.output_K` where graph_N is a function of the
/// model: that function and K. Else false.
bool fedFrom(const dynrt_model_t &m, const std::string &name,
             std::string &function, size_t &output) {
  size_t dot = name.find(".output_");
  if (dot == std::string::npos || name.compare(0, 6, "graph_") != 0)
    return false;
  std::string digits = name.substr(dot + 8);
  if (digits.empty() || digits.size() > 9 ||
      !std::all_of(digits.begin(), digits.end(),
                   [](char c) { return c >= '0' && c <= '9'; }))
    return false;
  function = name.substr(0, dot);
  output = std::stoul(digits);
  return functionSpec(m, function) != nullptr;
}

/// The caller's inputs of `spec`: its user inputs not fed from the context.
std::vector<const dynrt::TensorSpec *> callerInputs(const dynrt_model_t &m,
                                                    const dynrt::GraphSpec &g) {
  std::vector<const dynrt::TensorSpec *> out;
  std::string source;
  size_t k;
  for (size_t i = 0; i < g.numUserInputs; ++i)
    if (!fedFrom(m, g.inputs[i].name, source, k))
      out.push_back(&g.inputs[i]);
  return out;
}

dynrt_status_t *call(dynrt_context_t *c, const char *function,
                     const DLTensor *const *inputs, size_t numInputs,
                     const DLTensor **outputs, size_t numOutputs) {
  if (!c || !function || (!inputs && numInputs) || (!outputs && numOutputs))
    return makeStatus(DYNRT_INVALID_ARGUMENT,
                      "dynrt_context_call: null argument");
  const dynrt_model_t &m = *c->model;
  const dynrt::GraphSpec *g = functionSpec(m, function);
  if (!g)
    return unknownFunction(m, function);
  auto given = callerInputs(m, *g);
  if (numInputs != given.size()) {
    std::string names;
    for (const dynrt::TensorSpec *t : given)
      names += (names.empty() ? "" : ", ") + t->name;
    return makeStatus(DYNRT_INVALID_ARGUMENT,
                      "function '" + std::string(function) + "' takes " +
                          std::to_string(given.size()) + " inputs (" + names +
                          "), got " + std::to_string(numInputs));
  }
  if (outputs && numOutputs != g->outputs.size())
    return makeStatus(DYNRT_INVALID_ARGUMENT,
                      "function '" + std::string(function) + "' has " +
                          std::to_string(g->outputs.size()) +
                          " outputs, caller asked for " +
                          std::to_string(numOutputs));
  std::vector<const DLTensor *> all(g->numUserInputs);
  size_t next = 0;
  for (size_t i = 0; i < g->numUserInputs; ++i) {
    std::string source;
    size_t k;
    if (!fedFrom(m, g->inputs[i].name, source, k)) {
      all[i] = inputs[next++];
      continue;
    }
    auto it = c->kept.find(source);
    if (it == c->kept.end())
      return makeStatus(DYNRT_INVALID_ARGUMENT,
                        "function '" + std::string(function) + "' reads '" +
                            g->inputs[i].name + "': call '" + source +
                            "' on this context first");
    if (k >= it->second.size())
      return makeStatus(DYNRT_INVALID_ARGUMENT,
                        "function '" + std::string(function) + "' reads '" +
                            g->inputs[i].name + "', which '" + source +
                            "' does not return");
    all[i] = &it->second[k]->dl_tensor;
  }
  std::vector<DLManagedTensor *> made(g->outputs.size(), nullptr);
  if (dynrt_status_t *s =
          dynrt::runFunction("dynrt_context_call", c, function, all.data(),
                             all.size(), made.data(), made.size()))
    return s;
  std::vector<DLManagedTensor *> &slot = c->kept[function];
  for (DLManagedTensor *t : slot)
    dynrt::deleteManaged(t);
  slot = std::move(made);
  for (size_t i = 0; outputs && i < numOutputs; ++i)
    outputs[i] = &slot[i]->dl_tensor;
  return nullptr;
}
} // namespace

extern "C" size_t dynrt_model_num_functions(const dynrt_model_t *model) {
  return model ? functionNames(*model).size() : 0;
}

extern "C" const char *dynrt_model_function_name(const dynrt_model_t *model,
                                                 size_t index) {
  if (!model)
    return nullptr;
  auto names = functionNames(*model);
  return index < names.size() ? names[index]->c_str() : nullptr;
}

extern "C" dynrt_status_t *
dynrt_model_function_arity(const dynrt_model_t *model, const char *function,
                           size_t *num_inputs, size_t *num_outputs) {
  return guarded("dynrt_model_function_arity", [&]() -> dynrt_status_t * {
    if (!model || !function || !num_inputs || !num_outputs)
      return makeStatus(DYNRT_INVALID_ARGUMENT,
                        "dynrt_model_function_arity: null argument");
    const dynrt::GraphSpec *g = functionSpec(*model, function);
    if (!g)
      return unknownFunction(*model, function);
    *num_inputs = callerInputs(*model, *g).size();
    *num_outputs = g->outputs.size();
    return nullptr;
  });
}

extern "C" const char *
dynrt_model_function_input_name(const dynrt_model_t *model,
                                const char *function, size_t index) {
  if (!model || !function)
    return nullptr;
  const dynrt::GraphSpec *g = functionSpec(*model, function);
  if (!g)
    return nullptr;
  auto given = callerInputs(*model, *g);
  return index < given.size() ? given[index]->name.c_str() : nullptr;
}

extern "C" dynrt_model_t *dynrt_context_model(dynrt_context_t *context) {
  return context ? context->model : nullptr;
}

extern "C" dynrt_status_t *
dynrt_context_call(dynrt_context_t *context, const char *function,
                   const DLTensor *const *inputs, size_t num_inputs,
                   const DLTensor **outputs, size_t num_outputs) {
  return guarded("dynrt_context_call", [&] {
    return call(context, function, inputs, num_inputs, outputs, num_outputs);
  });
}
