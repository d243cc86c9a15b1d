//===- manifest.cpp - a model's manifest, parsed --------------------------===//
#include "dynrt/manifest.h"

#include <nlohmann/json.hpp>

#include <algorithm>

namespace dynrt {
namespace {
using nlohmann::json;

struct Reader {
  std::string &error;
  bool fail(const std::string &why) {
    if (error.empty())
      error = "invalid manifest: " + why;
    return false;
  }
  bool string(const json &j, const char *key, std::string &out,
              const std::string &where) {
    if (!j.contains(key) || !j[key].is_string())
      return fail(where + " needs a string '" + key + "'");
    out = j[key].get<std::string>();
    return true;
  }
  bool ints(const json &j, const char *key, std::vector<int64_t> &out,
            const std::string &where) {
    if (!j.contains(key) || !j[key].is_array())
      return fail(where + " needs an integer array '" + key + "'");
    for (auto &v : j[key]) {
      if (!v.is_number_integer())
        return fail(where + " has a non-integer in '" + key + "'");
      out.push_back(v.get<int64_t>());
    }
    return true;
  }
  bool dtype(const json &j, DType &out, const std::string &where) {
    std::string name;
    if (!string(j, "dtype", name, where))
      return false;
    auto d = dtypeFromTorchName(name);
    if (!d)
      return fail(where + " has unknown dtype '" + name + "'");
    out = *d;
    return true;
  }
  bool tensor(const json &j, TensorSpec &t, const std::string &where) {
    if (!j.is_object())
      return fail(where + " is not an object");
    if (!(string(j, "kind", t.kind, where) &&
          string(j, "name", t.name, where) && dtype(j, t.dtype, where) &&
          ints(j, "shape", t.shape, where)))
      return false;
    if (t.shape.size() > kMaxRank)
      return fail(where + " has rank " + std::to_string(t.shape.size()) +
                  "; the runtime supports up to " + std::to_string(kMaxRank));
    for (int64_t d : t.shape)
      if (d < -1)
        return fail(where + " has a negative dim");
    return true;
  }
};
} // namespace

/// Parses one graph object (or a graph's "prepare" object) into `spec`.
static bool parseGraph(Reader &r, const json &g, GraphSpec &spec,
                       std::string where) {
  if (!g.is_object() || !r.string(g, "name", spec.name, where) ||
      !r.string(g, "symbol", spec.symbol, where) ||
      !r.string(g, "shapes_symbol", spec.shapesSymbol, where))
    return r.fail(where + " is malformed");
  if (g.contains("workspace_bytes") && g["workspace_bytes"].is_number_integer())
    spec.workspaceBytes = g["workspace_bytes"].get<int64_t>();
  where = "graph '" + spec.name + "'";
  r.string(g, "entry", spec.entry, where);
  r.string(g, "function", spec.function, where);
  r.string(g, "kind", spec.kind, where);
  r.error.clear();
  if (g.contains("output_structure"))
    spec.outputStructure = g["output_structure"].dump();
  for (const char *key : {"inputs", "outputs", "guards"})
    if (!g.contains(key) || !g[key].is_array())
      return r.fail(where + " needs an array '" + key + "'");
  for (auto &in : g["inputs"]) {
    TensorSpec t;
    if (!r.tensor(in, t,
                  where + " input " + std::to_string(spec.inputs.size())))
      return false;
    if (t.kind == "user") {
      if (spec.numUserInputs != spec.inputs.size())
        return r.fail(where + ": user inputs must come first");
      ++spec.numUserInputs;
    }
    spec.inputs.push_back(std::move(t));
  }
  for (auto &out : g["outputs"]) {
    TensorSpec t;
    if (!r.tensor(out, t,
                  where + " output " + std::to_string(spec.outputs.size())))
      return false;
    spec.outputs.push_back(std::move(t));
  }
  for (auto &gj : g["guards"]) {
    Guard guard;
    std::string gw = where + " guard " + std::to_string(spec.guards.size());
    if (!gj.is_object())
      return r.fail(gw + " is not an object");
    if (!r.string(gj, "kind", guard.kind, gw) ||
        !r.string(gj, "text", guard.text, gw))
      return false;
    if (guard.kind == "tensor_match") {
      if (!gj.contains("input") || !gj["input"].is_number_integer())
        return r.fail(gw + " needs an integer 'input'");
      guard.input = gj["input"].get<int64_t>();
      if (guard.input < 0 || guard.input >= (int64_t)spec.numUserInputs)
        return r.fail(gw + " names input " + std::to_string(guard.input) +
                      ", which is not a user input");
      if (!r.dtype(gj, guard.dtype, gw) ||
          !r.ints(gj, "sizes", guard.sizes, gw))
        return false;
      if (gj.contains("strides") && !r.ints(gj, "strides", guard.strides, gw))
        return false;
    } else if (guard.kind == "size") {
      if (!r.ints(gj, "terms", guard.terms, gw) ||
          !r.string(gj, "op", guard.op, gw))
        return false;
      if (!gj.contains("constant") || !gj["constant"].is_number_integer())
        return r.fail(gw + " needs an integer 'constant'");
      guard.constant = gj["constant"].get<int64_t>();
      static const char *const ops[] = {"<", "<=", "==", "!=", ">", ">="};
      if (guard.terms.size() % 3 != 0 ||
          std::find(std::begin(ops), std::end(ops), guard.op) == std::end(ops))
        return r.fail(gw + " has malformed 'terms' or an unknown 'op'");
      for (size_t k = 0; k < guard.terms.size(); k += 3)
        if (guard.terms[k] < 0 ||
            guard.terms[k] >= (int64_t)spec.numUserInputs ||
            guard.terms[k + 1] < 0 ||
            guard.terms[k + 1] >=
                (int64_t)spec.inputs[guard.terms[k]].shape.size())
          return r.fail(gw + " names a dim of an input it does not have");
    }
    spec.guards.push_back(std::move(guard));
  }
  if (g.contains("mutations")) {
    if (!g["mutations"].is_array())
      return r.fail(where + ": 'mutations' is not an array");
    for (auto &mj : g["mutations"]) {
      Mutation mu;
      std::string mw =
          where + " mutation " + std::to_string(spec.mutations.size());
      if (!mj.is_object())
        return r.fail(mw + " is not an object");
      if (!r.string(mj, "input", mu.input, mw))
        return false;
      if (!mj.contains("output") || !mj["output"].is_number_unsigned() ||
          mj["output"].get<size_t>() >= spec.outputs.size())
        return r.fail(mw + " needs an 'output' index below " +
                      std::to_string(spec.outputs.size()));
      mu.output = mj["output"].get<size_t>();
      auto in =
          std::find_if(spec.inputs.begin(), spec.inputs.end(),
                       [&](const TensorSpec &t) { return t.name == mu.input; });
      if (in == spec.inputs.end() || in->kind == "prepared")
        return r.fail(mw + " names '" + mu.input +
                      "', which is not an input of the graph");
      const TensorSpec &out = spec.outputs[mu.output];
      bool weight = in->kind != "user";
      if (in->dtype != out.dtype || in->shape.size() != out.shape.size() ||
          (weight && in->shape != out.shape))
        return r.fail(mw + ": output " + std::to_string(mu.output) +
                      " does not have the dtype and shape of '" + mu.input +
                      "'");
      spec.mutations.push_back(std::move(mu));
    }
  }
  if (g.contains("process_groups")) {
    if (!g["process_groups"].is_array())
      return r.fail(where + ": 'process_groups' is not an array");
    for (auto &pj : g["process_groups"]) {
      ProcessGroup pg;
      std::string pw = where + " process group " +
                       std::to_string(spec.processGroups.size());
      if (!pj.is_object())
        return r.fail(pw + " is not an object");
      if (!r.string(pj, "name", pg.name, pw))
        return false;
      if (!pj.contains("size") || !pj["size"].is_number_integer() ||
          pj["size"].get<int64_t>() < 1)
        return r.fail(pw + " needs a 'size' of at least 1");
      pg.size = pj["size"].get<int64_t>();
      spec.processGroups.push_back(std::move(pg));
    }
  }
  if (g.contains("kernels")) {
    if (!g["kernels"].is_array())
      return r.fail(where + ": 'kernels' is not an array");
    for (auto &kj : g["kernels"]) {
      KernelSpec k;
      std::string kw = where + " kernel " + std::to_string(spec.kernels.size());
      if (!kj.is_object())
        return r.fail(kw + " is not an object");
      if (!r.string(kj, "name", k.name, kw))
        return false;
      k.category = kj.contains("category") && kj["category"].is_string()
                       ? kj["category"].get<std::string>()
                       : "kernel";
      json args = {{"graph", spec.name}};
      if (kj.contains("ops") && kj["ops"].is_array())
        args["ops"] = kj["ops"];
      if (kj.contains("loc") && kj["loc"].is_string())
        args["loc"] = kj["loc"];
      // A bad byte in a string becomes U+FFFD rather than an exception.
      k.args = args.dump(-1, ' ', false, json::error_handler_t::replace);
      spec.kernels.push_back(std::move(k));
    }
  }
  if (g.contains("prepare")) {
    GraphSpec prepare;
    if (!parseGraph(r, g["prepare"], prepare, where + " prepare"))
      return false;
    // The graph's "prepared" inputs are the prepare function's outputs, in
    // order; the prepare function reads only weights.
    std::vector<const TensorSpec *> prepared;
    for (const TensorSpec &t : spec.inputs)
      if (t.kind == "prepared")
        prepared.push_back(&t);
    if (prepare.numUserInputs != 0 || !prepare.prepare.empty() ||
        prepared.size() != prepare.outputs.size())
      return r.fail(where + ": its prepare function does not match its "
                            "prepared inputs");
    for (size_t k = 0; k < prepared.size(); ++k)
      if (prepared[k]->dtype != prepare.outputs[k].dtype ||
          prepared[k]->shape != prepare.outputs[k].shape)
        return r.fail(where + ": prepared input '" + prepared[k]->name +
                      "' differs from output " + std::to_string(k) +
                      " of its prepare function");
    spec.prepare.push_back(std::move(prepare));
  }
  return true;
}

bool parseManifest(std::string_view text, Manifest &m, std::string &error) {
  json j = json::parse(text.begin(), text.end(), nullptr, false);
  Reader r{error};
  if (j.is_discarded() || !j.is_object())
    return r.fail("not a JSON object");
  if (!j.contains("format") || j["format"] != "dynoc-model")
    return r.fail("'format' is not \"dynoc-model\"");
  if (!j.contains("version") || !j["version"].is_number_integer())
    return r.fail("no integer 'version'");
  m.version = j["version"].get<int>();
  if (m.version > kManifestVersion)
    return r.fail("version " + std::to_string(m.version) +
                  " is newer than this runtime reads (" +
                  std::to_string(kManifestVersion) + ")");
  if (j.contains("weights") && j["weights"].is_string())
    m.weights = j["weights"].get<std::string>();
  if (j.contains("weights_embedded") && j["weights_embedded"].is_boolean())
    m.weightsEmbedded = j["weights_embedded"].get<bool>();
  if (j.contains("weights_digest")) {
    if (!j["weights_digest"].is_string())
      return r.fail("'weights_digest' is not a string");
    m.weightsDigest = j["weights_digest"].get<std::string>();
  }
  if (j.contains("device")) {
    if (!j["device"].is_string() ||
        (j["device"] != "cpu" && j["device"] != "cuda"))
      return r.fail("'device' is not \"cpu\" or \"cuda\"");
    m.device = j["device"].get<std::string>();
  }
  if (!j.contains("graphs") || !j["graphs"].is_array() || j["graphs"].empty())
    return r.fail("no 'graphs'");
  for (auto &g : j["graphs"]) {
    GraphSpec spec;
    if (!parseGraph(r, g, spec, "graph " + std::to_string(m.graphs.size())))
      return false;
    spec.deviceType = m.device == "cuda" ? 2 /* kDLCUDA */ : 1 /* kDLCPU */;
    for (GraphSpec &p : spec.prepare)
      p.deviceType = spec.deviceType;
    m.graphs.push_back(std::move(spec));
  }
  // Variants of one function agree on their signature.
  for (auto &g : m.graphs) {
    auto &first = *std::find_if(
        m.graphs.begin(), m.graphs.end(),
        [&](const GraphSpec &f) { return f.function == g.function; });
    if (g.numUserInputs != first.numUserInputs ||
        g.outputs.size() != first.outputs.size() ||
        !std::equal(g.outputs.begin(), g.outputs.end(), first.outputs.begin(),
                    [](const TensorSpec &a, const TensorSpec &b) {
                      return a.shape.size() == b.shape.size();
                    }))
      return r.fail(
          "variants '" + first.name + "' and '" + g.name +
          "' disagree on the number of inputs or outputs or the output ranks");
  }
  return true;
}

} // namespace dynrt
