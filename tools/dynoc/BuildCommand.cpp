//===- BuildCommand.cpp - dynoc build -------------------------------------===//
#include "Commands.h"

#include "dynoc/CodegenCPU/CpuCodegen.h"
#include "dynoc/CodegenCUDA/CudaCodegen.h"
#include "dynoc/IR/GraphAttrs.h"
#include "dynoc/IR/GraphIO.h"

#include "dynoc/Codegen/Build.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/FileSystem.h"

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>

namespace dynoc::cli {

/// Runs the target's build on a parsed graph module; `options.mlirPath`
/// locates the weights its `dynoc.weights` names.
static int lowerModule(mlir::ModuleOp module, const BuildRequest &request,
                       const std::string &mlirPath) {
  codegen::BuildOptions options;
  options.mlirPath = mlirPath;
  options.outputPath = request.output;
  options.optLevel = request.optLevel;
  options.emitSourceOnly = request.emit == "cpp" || request.emit == "cu";
  options.emitMlirOnly = request.emit == "mlir";
  options.embedWeights = request.embedWeights;
  options.arch = request.arch;
  options.allowTf32 = request.allowTf32;
  options.cpu = request.cpu;
  options.bucketCapMb = request.bucketCapMb;
  if (request.target == "cuda" && request.emit == "cpp")
    return fail("build", "--emit=cpp is the CPU target's source; the CUDA "
                         "target's is --emit=cu");
  if (request.target == "cpu" && request.emit == "cu")
    return fail("build", "--emit=cu needs --target=cuda");
  auto result = request.target == "cuda" ? buildCudaModel(module, options)
                                         : buildCpuModel(module, options);
  return mlir::failed(result) ? 1 : 0;
}

int buildGraphFile(const BuildRequest &request) {
  const std::string &mlirPath = request.input;
  mlir::DialectRegistry registry;
  registerGraphDialects(registry);
  mlir::MLIRContext context(registry);
  // Errors are located at the op; printing the op (or the whole module, for
  // a toolchain error) after each would bury the message.
  context.printOpOnDiagnostic(false);
  llvm::SourceMgr sourceMgr;
  mlir::SourceMgrDiagnosticHandler handler(sourceMgr, &context);
  auto module = parseGraphFile(mlirPath, context, sourceMgr);
  if (!module)
    return 1;
  return lowerModule(*module, request, mlirPath);
}

std::vector<std::string> unbuildableOps(const std::string &mlirPath,
                                        const std::string &target) {
  mlir::DialectRegistry registry;
  registerGraphDialects(registry);
  mlir::MLIRContext context(registry);
  context.printOpOnDiagnostic(false);
  llvm::SourceMgr sourceMgr;
  std::string text;
  llvm::raw_string_ostream os(text);
  mlir::SourceMgrDiagnosticHandler handler(sourceMgr, &context, os);
  auto module = parseGraphFile(mlirPath, context, sourceMgr);
  if (module) {
    llvm::SmallString<128> source;
    llvm::sys::fs::createTemporaryFile("dynoc-check", "src", source);
    codegen::BuildOptions options;
    options.mlirPath = mlirPath;
    options.outputPath = source.str().str();
    options.emitSourceOnly = true; // the op checks, no compiler
    codegen::ProgressSilencer quiet;
    (void)(target == "cuda" ? buildCudaModel(*module, options)
                            : buildCpuModel(*module, options));
    llvm::sys::fs::remove(source);
  }
  os.flush();
  std::vector<std::string> errors;
  llvm::SmallVector<llvm::StringRef> lines;
  llvm::StringRef(text).split(lines, '\n');
  for (llvm::StringRef line : lines)
    if (line.contains(": error: "))
      errors.push_back(line.str());
  return errors;
}

/// The texts of a graph module's guards that the runtime does not check
/// (Python values; global state).
static std::set<std::string> uncheckedGuards(mlir::ModuleOp module) {
  std::set<std::string> out;
  for (auto func : module.getBody()->getOps<mlir::func::FuncOp>())
    if (auto guards = func->getAttrOfType<mlir::ArrayAttr>(attrs::kGuards))
      for (mlir::Attribute a : guards) {
        auto d = a.cast<mlir::DictionaryAttr>();
        llvm::StringRef kind = d.getAs<mlir::StringAttr>("kind").getValue();
        if (kind != "tensor_match" && kind != "size")
          out.insert(d.getAs<mlir::StringAttr>("text").str());
      }
  return out;
}

/// `dynoc build DIR`: the variants of one entry in a capture directory become
/// one model (the runtime runs the first whose guards pass).
int buildCaptureDir(const BuildRequest &request) {
  const std::string &dir = request.input, &entryWanted = request.entry;
  std::ifstream in(dir + "/manifest.json");
  if (!in)
    return fail("build", "'" + dir +
                             "' has no manifest.json (is it a 'dynoc "
                             "capture' output directory?)");
  nlohmann::json manifest;
  try {
    in >> manifest;
  } catch (const std::exception &e) {
    return fail("build", "'" + dir + "/manifest.json' is malformed: " +
                             std::string(e.what()));
  }
  // Whole regions only: a graph of a region split by a break (its inputs
  // come from another graph, or its outputs feed one) is not a model.
  static const std::regex crossGraph(R"(graph_\d+\.output_\d+)");
  std::map<std::string, std::vector<nlohmann::json>> byEntry;
  std::vector<std::string> fragments;
  for (auto &g : manifest.value("graphs", nlohmann::json::array())) {
    bool fragment = g.value("output_structure", nlohmann::json::object())
                        .value("type", "") == "intermediate";
    for (auto &i : g.value("inputs", nlohmann::json::array()))
      fragment |= std::regex_match(i.value("name", ""), crossGraph);
    if (fragment)
      fragments.push_back(g.value("name", "?"));
    else
      byEntry[g.value("entry", "?")].push_back(g);
  }
  if (byEntry.empty())
    return fail("build", "no graph in '" + dir +
                             "' is a whole region (graphs of regions split by "
                             "a graph break build one by one)");
  std::vector<nlohmann::json> graphs;
  if (!entryWanted.empty()) {
    auto it = byEntry.find(entryWanted);
    if (it == byEntry.end())
      return fail("build", "no whole-region graph of entry '" + entryWanted +
                               "' in '" + dir + "'");
    graphs = it->second;
  } else if (byEntry.size() == 1) {
    graphs = byEntry.begin()->second;
  } else {
    std::string names;
    for (auto &[e, gs] : byEntry)
      names += "\n  " + e + " (" + std::to_string(gs.size()) + " graphs)";
    return fail("build", "'" + dir +
                             "' has graphs of several entries; pick "
                             "one with --entry:" +
                             names);
  }
  mlir::DialectRegistry registry;
  registerGraphDialects(registry);
  mlir::MLIRContext context(registry);
  context.printOpOnDiagnostic(false); // as in buildGraphFile
  // One source manager per file: a parse reads its manager's main buffer.
  std::vector<std::unique_ptr<llvm::SourceMgr>> sources;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  std::set<std::string> firstUnchecked;
  std::string first = dir + "/" + graphs.front().value("mlir", "");
  for (auto &g : graphs) {
    sources.push_back(std::make_unique<llvm::SourceMgr>());
    mlir::SourceMgrDiagnosticHandler handler(*sources.back(), &context);
    auto parsed = parseGraphFile(dir + "/" + g.value("mlir", ""), context,
                                 *sources.back());
    if (!parsed)
      return 1;
    // The runtime checks tensor and size guards: variants must not differ in
    // the Python-value guards it cannot check.
    std::set<std::string> unchecked = uncheckedGuards(*parsed);
    if (!module)
      firstUnchecked = unchecked;
    else if (unchecked != firstUnchecked)
      return fail("build",
                  "variants " + graphs.front().value("name", "?") + " and " +
                      g.value("name", "?") +
                      " differ in Python-value guards, which the runtime "
                      "cannot check; build them one by one");
    if (!module) {
      module = std::move(parsed);
      continue;
    }
    for (auto func : llvm::make_early_inc_range(
             parsed->getBody()->getOps<mlir::func::FuncOp>()))
      func->moveBefore(module->getBody(), module->getBody()->end());
  }
  llvm::SourceMgr &sourceMgr = *sources.front();
  mlir::SourceMgrDiagnosticHandler handler(sourceMgr, &context);
  fmt::print(stderr, "[dynoc build] {}: {} variant(s) of {}{}\n", dir,
             graphs.size(), graphs.front().value("entry", "?"),
             fragments.empty() ? ""
                               : " (" + std::to_string(fragments.size()) +
                                     " graph(s) of split regions left out)");
  return lowerModule(*module, request, first);
}

/// `dynoc build A.mlir B.mlir ...`: one model with each graph file as a
/// function named after its graph (dynrt_context_call), sharing the weights
/// file of their capture directory.
int buildBundle(const BuildRequest &request) {
  mlir::DialectRegistry registry;
  registerGraphDialects(registry);
  mlir::MLIRContext context(registry);
  context.printOpOnDiagnostic(false); // as in buildGraphFile
  std::vector<std::unique_ptr<llvm::SourceMgr>> sources;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  std::set<std::string> names;
  namespace fs = std::filesystem;
  fs::path dir = fs::absolute(request.inputs.front()).parent_path();
  for (const std::string &path : request.inputs) {
    if (fs::is_directory(path))
      return fail("build", "'" + path +
                               "' is a directory: a bundle takes graph files "
                               "(dynoc build GRAPH.mlir GRAPH.mlir ...)");
    if (fs::absolute(path).parent_path() != dir)
      return fail("build", "'" + path + "' is not in '" + dir.string() +
                               "': bundled graph files share one capture "
                               "directory's weights");
    sources.push_back(std::make_unique<llvm::SourceMgr>());
    mlir::SourceMgrDiagnosticHandler handler(*sources.back(), &context);
    auto parsed = parseGraphFile(path, context, *sources.back());
    if (!parsed)
      return 1;
    auto funcs = parsed->getBody()->getOps<mlir::func::FuncOp>();
    if (std::distance(funcs.begin(), funcs.end()) != 1)
      return fail("build", "'" + path +
                               "' holds more than one graph; a bundle takes "
                               "one graph per file");
    mlir::func::FuncOp func = *funcs.begin();
    std::string name = func.getSymName().str();
    if (!names.insert(name).second)
      return fail("build", "graph '" + name + "' is given twice");
    func->setAttr(attrs::kFunction, mlir::StringAttr::get(&context, name));
    if (!module) {
      module = std::move(parsed);
      continue;
    }
    func->moveBefore(module->getBody(), module->getBody()->end());
  }
  llvm::SourceMgr &sourceMgr = *sources.front();
  mlir::SourceMgrDiagnosticHandler handler(sourceMgr, &context);
  std::string list;
  for (auto func : module->getBody()->getOps<mlir::func::FuncOp>())
    list += (list.empty() ? "" : ", ") + func.getSymName().str();
  fmt::print(stderr, "[dynoc build] {} function(s) in one model: {}\n",
             request.inputs.size(), list);
  return lowerModule(*module, request, request.inputs.front());
}

void addBuildCommand(CLI::App &app, int &exitCode) {
  auto *cmd = app.add_subcommand(
      "build", "Compile a captured graph file (.mlir), or a capture "
               "directory's variants of one entry, into a model .so that "
               "libdynrt runs. Its weights go to <MODEL>.weights.safetensors "
               "beside it.");
  auto opts = std::make_shared<BuildRequest>();
  cmd->add_option("GRAPH", opts->inputs,
                  "graph file written by 'dynoc capture', or its output "
                  "directory (all variants of one entry in one model); "
                  "several graph files of one capture: one model with a "
                  "function per graph (a forward, its backward and an "
                  "update; docs/runtime.md)")
      ->required();
  cmd->add_option("--entry", opts->entry,
                  "with a directory: the entry (file:line:function, as in "
                  "manifest.json) whose variants to bundle");
  cmd->add_option("-o,--output", opts->output, "model .so to write")
      ->required();
  cmd->add_option("--target", opts->target,
                  "code generator: cpu (C++ with OpenMP, oneDNN) or cuda "
                  "(CUDA C++ through nvcc, cuBLASLt; docs/cuda.md lists its "
                  "ops); the build machine needs no GPU")
      ->check(CLI::IsMember({"cpu", "cuda"}))
      ->capture_default_str();
  cmd->add_option("--arch", opts->arch,
                  "with --target=cuda: the GPU architecture the .so carries "
                  "machine code for (its PTX also runs on newer GPUs)")
      ->capture_default_str();
  cmd->add_option("--cpu", opts->cpu,
                  "with --target=cpu: the instruction-set level the code is "
                  "built for: native (this machine's; the default), "
                  "x86-64-v4 (AVX-512), x86-64-v3 (AVX2, FMA) or generic "
                  "(x86-64). The .so records the features it needs and "
                  "libdynrt refuses it on a CPU without them")
      ->check(CLI::IsMember({"native", "x86-64-v4", "x86-64-v3", "generic"}))
      ->capture_default_str();
  cmd->add_flag("--allow-tf32", opts->allowTf32,
                "with --target=cuda: f32 GEMMs on TF32 tensor cores (faster, "
                "about 1e-3 relative error); off by default, as in torch");
  cmd->add_option("-O", opts->optLevel,
                  "optimization level (0-3): -O0 runs only shape/dtype "
                  "inference and the bf16/f16 widening; from -O1 also "
                  "decomposition, canonicalization, "
                  "batch-norm folding, CSE, load-time precompute of ops on "
                  "weights and fusion (docs/passes.md); also the C++ "
                  "compiler's level")
      ->check(CLI::Range(0, 3))
      ->capture_default_str();
  cmd->add_option("--bucket-cap-mb", opts->bucketCapMb,
                  "a graph's all-reduces (DDP's gradient averaging) merge "
                  "into buckets of this many MiB, the first one 1 MiB, each "
                  "issued as its last gradient is computed (DDP's "
                  "bucket_cap_mb); 0: one all-reduce per tensor, as captured "
                  "(docs/distributed.md)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("--emit", opts->emit,
                  "so: the model; cpp (cpu) or cu (cuda): only the generated "
                  "source; mlir: only the graph after the passes")
      ->check(CLI::IsMember({"so", "cpp", "cu", "mlir"}))
      ->capture_default_str();
  cmd->add_flag("--embed-weights", opts->embedWeights,
                "link the weights into the .so instead of writing the "
                "<MODEL>.weights.safetensors sidecar");
  cmd->callback([opts, &exitCode] {
    if (opts->target != "cuda" &&
        (opts->allowTf32 || opts->arch != BuildRequest().arch)) {
      exitCode = fail("build", "--arch and --allow-tf32 need --target=cuda");
      return;
    }
    if (opts->target == "cuda" && opts->cpu != BuildRequest().cpu) {
      exitCode = fail("build", "--cpu needs --target=cpu");
      return;
    }
    opts->input = opts->inputs.front();
    if (opts->inputs.size() > 1) {
      if (!opts->entry.empty()) {
        exitCode = fail("build", "--entry needs a capture directory");
        return;
      }
      exitCode = buildBundle(*opts);
      return;
    }
    exitCode = std::filesystem::is_directory(opts->input)
                   ? buildCaptureDir(*opts)
                   : buildGraphFile(*opts);
  });
}

} // namespace dynoc::cli
