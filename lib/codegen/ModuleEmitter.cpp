//===- ModuleEmitter.cpp - graph module -> source + manifest --------------===//
#include "dynoc/Codegen/ModuleEmitter.h"
#include "GraphEmitter.h"
#include "dynoc/IR/GraphAttrs.h"
#include "dynoc/Passes/Pipeline.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

#include <nlohmann/json.hpp>

#include <set>

using namespace mlir;
using nlohmann::json;

namespace dynoc {
namespace codegen {

namespace {

json guardToJson(DictionaryAttr d) {
  json g = json::object();
  for (NamedAttribute a : d) {
    std::string key = a.getName().str();
    Attribute v = a.getValue();
    if (auto s = v.dyn_cast<StringAttr>())
      g[key] = s.str();
    else if (auto b = v.dyn_cast<BoolAttr>())
      g[key] = b.getValue();
    else if (auto i = v.dyn_cast<IntegerAttr>())
      g[key] = i.getInt();
    else if (auto f = v.dyn_cast<FloatAttr>())
      g[key] = f.getValueAsDouble();
    else if (auto t = v.dyn_cast<TypeAttr>())
      g[key] = torchDTypeName(t.getValue());
    else if (auto arr = v.dyn_cast<DenseI64ArrayAttr>())
      g[key] = arr.asArrayRef().vec();
  }
  return g;
}

json tensorJson(const std::string &kind, const std::string &name, Type t) {
  auto rt = t.cast<RankedTensorType>();
  std::vector<int64_t> shape;
  for (int64_t d : rt.getShape())
    shape.push_back(ShapedType::isDynamic(d) ? -1 : d);
  return {{"kind", kind},
          {"name", name},
          {"dtype", torchDTypeName(rt.getElementType())},
          {"shape", shape}};
}

} // namespace

LogicalResult emitModule(ModuleOp module, const Target &target,
                         const std::string &weightsFile, bool embedWeights,
                         const json &build, ModuleSource &out) {
  // The graphs' functions; the kernels they launch go before them.
  std::string graphs;
  KernelDefinitions definitions;
  json manifest = {{"format", "dynoc-model"},
                   {"version", 1},
                   {"device", target.name().str()},
                   {"build", build},
                   {"graphs", json::array()}};
  if (embedWeights)
    manifest["weights_embedded"] = true;
  else if (!weightsFile.empty())
    manifest["weights"] = weightsFile;
  std::set<std::string> weights;
  // Emits one function; `g` gets its symbols and signature.
  unsigned inPlaceOps = 0;
  auto emitGraph = [&](func::FuncOp func, const std::string &base,
                       json &g) -> LogicalResult {
    // The plan with in-place ops, unless the one without is smaller (greedy
    // slot assignment can come out either way).
    std::string code;
    KernelDefinitions withKernels = definitions;
    GraphEmitter emitter(func, code, /*allowInPlace=*/true, target,
                         withKernels);
    if (failed(emitter.emit(base)))
      return failure();
    int64_t workspace = emitter.staticWorkspaceBytes;
    inPlaceOps = emitter.inPlaceOps;
    std::vector<GraphEmitter::KernelSpan> chosenSpans = emitter.kernelSpans;
    if (workspace >= 0 && inPlaceOps > 0) {
      std::string other;
      KernelDefinitions withoutKernels = definitions;
      GraphEmitter without(func, other, /*allowInPlace=*/false, target,
                           withoutKernels);
      if (succeeded(without.emit(base)) &&
          without.staticWorkspaceBytes < workspace) {
        code = std::move(other);
        withKernels = std::move(withoutKernels);
        workspace = without.staticWorkspaceBytes;
        inPlaceOps = 0;
        chosenSpans = without.kernelSpans;
      }
    }
    definitions = std::move(withKernels);
    graphs += code;
    g["kernels"] = json::array();
    for (const GraphEmitter::KernelSpan &k : chosenSpans)
      g["kernels"].push_back({{"name", k.name},
                              {"category", k.category},
                              {"ops", k.ops},
                              {"loc", k.loc}});
    g["name"] = func.getSymName().str();
    g["symbol"] = base + "_run";
    g["shapes_symbol"] = base + "_shapes";
    g["workspace_bytes"] = workspace;
    auto inputs = func->getAttrOfType<ArrayAttr>(attrs::kInputs);
    if (!inputs)
      return func.emitError()
             << "graph '" << func.getSymName() << "' lacks '" << attrs::kInputs
             << "'; is it a dynoc graph file?";
    g["inputs"] = json::array();
    for (auto [i, in] : llvm::enumerate(inputs)) {
      auto d = in.cast<DictionaryAttr>();
      std::string kind = d.getAs<StringAttr>("kind").str();
      std::string name = d.getAs<StringAttr>("name").str();
      g["inputs"].push_back(tensorJson(kind, name, func.getArgumentTypes()[i]));
      if (kind != "user" && kind != "prepared")
        weights.insert(name);
    }
    g["outputs"] = json::array();
    for (auto [i, t] : llvm::enumerate(func.getResultTypes()))
      g["outputs"].push_back(
          tensorJson("output", "output_" + std::to_string(i), t));
    return success();
  };
  // Prepare functions (dynoc-precompute-weights) go with their graph.
  llvm::StringMap<func::FuncOp> prepares;
  for (auto func : module.getOps<func::FuncOp>())
    if (auto p = func->getAttrOfType<StringAttr>(attrs::kPrepares))
      prepares[p.getValue()] = func;
  int index = 0;
  // A graph the target cannot emit does not stop the others: a bundle's
  // unsupported ops are all reported in one build.
  bool failedGraph = false;
  bool collectives = false; // some graph runs a collective
  for (auto func : module.getOps<func::FuncOp>()) {
    if (func->hasAttr(attrs::kPrepares))
      continue;
    std::string base = "dynoc_graph_" + std::to_string(index++);
    json g = json::object();
    if (failed(emitGraph(func, base, g))) {
      failedGraph = true;
      continue;
    }
    out.workspaceBytes.push_back(g["workspace_bytes"].get<int64_t>());
    out.inPlaceOps.push_back(inPlaceOps);
    if (auto e = func->getAttrOfType<StringAttr>(attrs::kEntry))
      g["entry"] = e.str();
    if (auto it = prepares.find(func.getSymName()); it != prepares.end()) {
      json p = json::object();
      if (failed(emitGraph(it->second, base + "_prepare", p)))
        return failure();
      p["guards"] = json::array();
      g["prepare"] = p;
    }
    if (auto s = func->getAttrOfType<StringAttr>(attrs::kOutputs)) {
      json structure = json::parse(s.str(), nullptr, false);
      if (structure.is_discarded())
        return func.emitError()
               << "'" << attrs::kOutputs << "' is not valid JSON";
      g["output_structure"] = structure;
    }
    if (auto s = func->getAttrOfType<StringAttr>(attrs::kMutations)) {
      json mutations = json::parse(s.str(), nullptr, false);
      if (mutations.is_discarded() || !mutations.is_array())
        return func.emitError()
               << "'" << attrs::kMutations << "' is not a JSON array";
      g["mutations"] = mutations;
    }
    // A backward graph says so, and which leaves' gradients it returns
    // (dynoc.load_trainable pairs it with its forward: docs/training.md).
    if (auto k = func->getAttrOfType<StringAttr>(attrs::kKind))
      g["kind"] = k.str();
    if (auto f = func->getAttrOfType<StringAttr>(attrs::kFunction))
      g["function"] = f.str();
    if (auto s = func->getAttrOfType<StringAttr>(attrs::kGrads)) {
      json grads = json::parse(s.str(), nullptr, false);
      if (grads.is_discarded() || !grads.is_array())
        return func.emitError()
               << "'" << attrs::kGrads << "' is not a JSON array";
      g["grads"] = grads;
    }
    // The process groups its collectives use and their sizes, which libdynrt
    // checks against the communicator's groups before running anything.
    json groups = json::object();
    func.walk([&](Operation *op) {
      auto name = op->getAttrOfType<StringAttr>("group_name");
      auto size = op->getAttrOfType<IntegerAttr>("group_size");
      if (name && size && op->getDialect()->getNamespace() == "dynoc")
        groups[name.str()] = size.getInt();
    });
    if (!groups.empty()) {
      g["process_groups"] = json::array();
      for (auto &[group, size] : groups.items())
        g["process_groups"].push_back({{"name", group}, {"size", size}});
      collectives = true;
    }
    g["guards"] = json::array();
    if (auto guards = func->getAttrOfType<ArrayAttr>(attrs::kGuards))
      for (Attribute a : guards)
        g["guards"].push_back(guardToJson(a.cast<DictionaryAttr>()));
    manifest["graphs"].push_back(g);
  }
  if (failedGraph)
    return failure();
  if (index == 0)
    return module.emitError()
           << "dynoc build: the module has no graph (func.func)";
  out.weightNames.assign(weights.begin(), weights.end());
  if (out.weightNames.empty()) {
    manifest.erase("weights");
    manifest.erase("weights_embedded");
  }
  // The profiling hooks (model_abi.h: dynoc_model_set_profiler). Each run
  // reads the pointer once; with no profile recorded it is null and a kernel
  // costs one predictable branch more.
  static const char *kProfilerHooks =
      "struct dynoc_profiler_hooks_t {\n"
      "  void *user;\n"
      "  void (*begin)(void *user, int kernel, void *stream);\n"
      "  void (*end)(void *user, int kernel, void *stream);\n"
      "};\n"
      "static const dynoc_profiler_hooks_t *dynoc_profiler_hooks_ptr = "
      "nullptr;\n"
      "static inline const dynoc_profiler_hooks_t *dynoc_current_profiler() {\n"
      "  return __atomic_load_n(&dynoc_profiler_hooks_ptr, __ATOMIC_ACQUIRE);\n"
      "}\n"
      "extern \"C\" DYNOC_EXPORT void dynoc_model_set_profiler(const void "
      "*hooks) {\n"
      "  __atomic_store_n(&dynoc_profiler_hooks_ptr,\n"
      "                   static_cast<const dynoc_profiler_hooks_t *>(hooks),\n"
      "                   __ATOMIC_RELEASE);\n"
      "}\n\n";
  // A model with collectives takes its communicator from libdynrt
  // (dynrt_model_set_communicator; model_abi.h's dynoc_bind_collectives).
  static const char *kCollectivesHook =
      "extern \"C\" DYNOC_EXPORT int dynoc_bind_collectives(const void *c) "
      "{\n"
      "  const auto *table = static_cast<const dynoc_collectives *>(c);\n"
      "  if (table && table->abi != dynoc_k::kCollectivesAbi)\n"
      "    return dynoc_k::kCollectivesAbi;\n"
      "  dynoc_k::boundCollectives() = table;\n"
      "  return 0;\n"
      "}\n\n";
  out.source = target.sourceHeader() + kProfilerHooks +
               (collectives ? kCollectivesHook : "") + definitions.text() +
               graphs;
  out.kernelDefinitions = definitions.size();
  out.manifest = std::move(manifest);
  return success();
}

void finishModuleSource(const Target &target, ModuleSource &out) {
  // The graph file's strings are UTF-8 (parseGraphBuffer): a byte that is not
  // could come only from a location's file name, and is replaced.
  out.manifestJson =
      out.manifest.dump(1, ' ', false, json::error_handler_t::replace);
  // The manifest is printed in a raw string literal: a graph file's string
  // holding its delimiter would end the literal and put what follows into
  // the model's code. JSON says the same with the ')' escaped (it can occur
  // only inside a string).
  static const std::string kDelimiter = ")DYNOC_MANIFEST";
  for (size_t at = out.manifestJson.find(kDelimiter); at != std::string::npos;
       at = out.manifestJson.find(kDelimiter, at))
    out.manifestJson.replace(at, 1, "\\u0029");
  out.source +=
      "static const char kManifest[] = R\"DYNOC_MANIFEST(" + out.manifestJson +
      ")DYNOC_MANIFEST\";\n\n"
      "extern \"C\" DYNOC_EXPORT const char *dynoc_model_manifest(void) "
      "{ return kManifest; }\n"
      "extern \"C\" DYNOC_EXPORT int dynoc_model_abi_version(void) { "
      "return " +
      std::to_string(target.abiVersion()) + "; }\n";
}

LogicalResult runBuildPasses(ModuleOp module, int optLevel,
                             const Target &target, double bucketCapMb) {
  PassManager pm(module.getContext());
  GraphPipelineOptions options;
  options.optLevel = optLevel;
  options.reducedPrecisionOps = target.reducedPrecisionOps();
  options.bucketCapMb = bucketCapMb;
  options.decomposeAttentionBackward = !target.attentionBackward();
  options.decomposeAttentionF32 = !target.fastAttentionF32();
  buildGraphPipeline(pm, options);
  return pm.run(module);
}

} // namespace codegen
} // namespace dynoc
