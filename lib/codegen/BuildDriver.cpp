//===- BuildDriver.cpp - graph module -> model .so, for any target -------===//
#include "dynoc/Codegen/Build.h"
#include "dynoc/Codegen/ModuleEmitter.h"
#include "dynoc/IR/GraphAttrs.h"
#include "dynoc/Version.h"
#include "dynrt/digest.h"
#include "dynrt/safetensors.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <atomic>
#include <chrono>
#include <fstream>
#include <map>

using namespace mlir;

namespace dynoc {
namespace codegen {
std::string bundledToolchain() {
  if (const char *env = getenv("DYNOC_TOOLCHAIN_HOME"))
    return env;
  // The wheel lays out dynoc/_bin/dynoc and dynoc/_toolchain/.
  std::string exe = llvm::sys::fs::getMainExecutable(nullptr, nullptr);
  llvm::SmallString<256> dir(llvm::sys::path::parent_path(exe));
  llvm::sys::path::remove_filename(dir);
  llvm::sys::path::append(dir, "_toolchain");
  return llvm::sys::fs::is_directory(dir) ? std::string(dir) : "";
}

bool writeFile(const std::string &path, llvm::StringRef text) {
  // Through a temporary name of this process's own: a killed build never
  // leaves half a file, and builds writing the same file at once (the
  // prelude header) never write into each other's.
  std::string tmp =
      path + ".tmp" + std::to_string(llvm::sys::Process::getProcessId());
  {
    std::ofstream f(tmp, std::ios::binary);
    f.write(text.data(), std::streamsize(text.size()));
    if (!f.flush()) {
      llvm::sys::fs::remove(tmp);
      return false;
    }
  }
  if (llvm::sys::fs::rename(tmp, path)) {
    llvm::sys::fs::remove(tmp);
    return false;
  }
  return true;
}

std::string readTail(const std::string &path, size_t maxBytes) {
  std::ifstream f(path, std::ios::binary);
  std::string s((std::istreambuf_iterator<char>(f)),
                std::istreambuf_iterator<char>());
  return s.size() > maxBytes ? "..." + s.substr(s.size() - maxBytes) : s;
}

namespace {

/// Copies the weights the graphs read from the capture's safetensors file into
/// the sidecar beside the .so.
LogicalResult writeWeights(ModuleOp module, const codegen::ModuleSource &src,
                           const BuildOptions &opts,
                           const std::string &sidecar) {
  std::string from;
  for (auto func : module.getOps<func::FuncOp>())
    if (auto w = func->getAttrOfType<StringAttr>(attrs::kWeights))
      from = w.str();
  if (from.empty())
    return module.emitError()
           << "the graphs read weights (" << src.weightNames.front()
           << ", ...) but name no '" << attrs::kWeights << "' file";
  llvm::SmallString<256> path(llvm::sys::path::parent_path(opts.mlirPath));
  llvm::sys::path::append(path, from);
  std::string error;
  auto file = dynrt::SafetensorsFile::open(path.str().str(), error);
  if (!file)
    return module.emitError() << error;
  std::map<std::string, dynrt::TensorView> selected;
  for (const std::string &name : src.weightNames) {
    const dynrt::TensorView *t = file->find(name);
    if (!t)
      return module.emitError()
             << "weights file '" << path << "' lacks tensor '" << name << "'";
    selected.emplace(name, *t);
  }
  if (!dynrt::writeSafetensors(sidecar, selected, error))
    return module.emitError() << error;
  return success();
}

/// Source that links the safetensors file at `path` into the .so and exports
/// it as dynoc_model_weights (read by libdynrt instead of a sidecar).
std::string embeddedWeightsSource(const std::string &path) {
  std::string quoted;
  for (char c : path) {
    if (c == '"' || c == '\\')
      quoted += '\\';
    quoted += c;
  }
  return "\n// The weights, linked in by --embed-weights.\n"
         "__asm__(\".pushsection .rodata\\n.balign 64\\n"
         "dynoc_weights_begin:\\n.incbin \\\"" +
         quoted +
         "\\\"\\ndynoc_weights_end:\\n.popsection\\n\");\n"
         "extern \"C\" __attribute__((visibility(\"hidden\"))) const unsigned "
         "char dynoc_weights_begin[], dynoc_weights_end[];\n"
         "extern \"C\" DYNOC_EXPORT const void *dynoc_model_weights(unsigned "
         "long *size) {\n"
         "  *size = dynoc_weights_end - dynoc_weights_begin;\n"
         "  return dynoc_weights_begin;\n}\n";
}

} // namespace

namespace {
std::atomic<int> silencers{0};
} // namespace

ProgressSilencer::ProgressSilencer() { ++silencers; }
ProgressSilencer::~ProgressSilencer() { --silencers; }

void progress(const llvm::Twine &msg) {
  if (silencers == 0)
    llvm::errs() << "[dynoc build] " << msg << "\n";
}

LogicalResult runCompiler(ModuleOp module, const std::vector<std::string> &argv,
                          const std::string &log, const std::string &source,
                          const std::string &what) {
  std::string cmdline;
  for (auto &a : argv)
    cmdline += (cmdline.empty() ? "" : " ") + a;
  progress("compiling: " + cmdline);
  std::vector<llvm::StringRef> args(argv.begin(), argv.end());
  std::optional<llvm::StringRef> redirects[] = {
      std::nullopt, llvm::StringRef(log), llvm::StringRef(log)};
  std::string execError;
  int rc = llvm::sys::ExecuteAndWait(argv.front(), args, std::nullopt,
                                     redirects, 0, 0, &execError);
  if (rc == 0)
    return success();
  return module.emitError() << "the " << what << " failed (exit " << rc << ")"
                            << (execError.empty() ? "" : ": " + execError)
                            << "; source kept in " << source << "\n"
                            << readTail(log, 2000);
}

LogicalResult buildModel(ModuleOp module, const Toolchain &toolchain,
                         const BuildOptions &opts) {
  auto start = std::chrono::steady_clock::now();
  if (failed(runBuildPasses(module, opts.optLevel, toolchain.target(),
                            opts.bucketCapMb)))
    return failure();
  for (auto f : module.getOps<func::FuncOp>())
    if (auto graph = f->getAttrOfType<StringAttr>(attrs::kPrepares)) {
      unsigned numOps = 0;
      f.walk([&](Operation *op) {
        numOps += op->getName().getDialectNamespace() == "aten";
      });
      progress(graph.getValue() + ": " + llvm::Twine(numOps) +
               " op(s) on weights alone run once at load (" + f.getSymName() +
               ")");
    }
  if (opts.emitMlirOnly) {
    std::error_code ec;
    llvm::raw_fd_ostream os(opts.outputPath, ec);
    if (ec)
      return module.emitError()
             << "cannot write '" << opts.outputPath << "': " << ec.message();
    module.print(os);
    progress("wrote " + opts.outputPath + " (the graph after the passes)");
    return success();
  }
  std::string out = opts.outputPath;
  llvm::StringRef stem = llvm::sys::path::stem(out);
  std::string sidecarName = stem.str() + ".weights.safetensors";
  FailureOr<nlohmann::json> build = toolchain.buildRecord(module, opts);
  if (failed(build))
    return failure();
  (*build)["dynoc_version"] = DYNOC_VERSION;
  (*build)["opt_level"] = opts.optLevel;
  ModuleSource src;
  if (failed(emitModule(module, toolchain.target(), sidecarName,
                        opts.embedWeights, *build, src)))
    return failure();
  size_t numGraphs = src.workspaceBytes.size();
  std::string kernels =
      src.kernelDefinitions
          ? ", " + std::to_string(src.kernelDefinitions) + " kernel(s)"
          : "";
  progress(llvm::Twine(numGraphs) + " graph(s) lowered to " +
           toolchain.target().displayName() + " source (" +
           llvm::Twine(src.source.size()) + " bytes" + kernels + ")");
  for (auto [i, bytes] : llvm::enumerate(src.workspaceBytes))
    progress("graph " + llvm::Twine(i) + ": peak intermediate bytes " +
             (bytes < 0 ? std::string("depend on dynamic dims")
                        : std::to_string(bytes)) +
             ", " + llvm::Twine(src.inPlaceOps[i]) + " op(s) in place");
  if (opts.emitSourceOnly) {
    finishModuleSource(toolchain.target(), src);
    src.source += toolchain.recordSource(opts);
    if (!writeFile(out, src.source))
      return module.emitError() << "cannot write '" << out << "'";
    progress("wrote " + out);
    return success();
  }

  llvm::SmallString<128> dir;
  if (auto ec = llvm::sys::fs::createUniqueDirectory("dynoc-build", dir))
    return module.emitError()
           << "cannot create a build directory: " << ec.message();
  std::string source = (dir + "/" + toolchain.sourceFileName()).str(),
              weights = (dir + "/weights.safetensors").str();
  std::string tmpSo = out + ".tmp";
  if (!src.weightNames.empty()) {
    if (failed(writeWeights(module, src, opts, weights)))
      return failure();
    if (opts.embedWeights) {
      src.source += embeddedWeightsSource(weights);
    } else {
      // libdynrt refuses a sidecar changed or replaced after this build.
      auto bytes =
          llvm::MemoryBuffer::getFile(weights, /*IsText=*/false,
                                      /*RequiresNullTerminator=*/false);
      if (!bytes)
        return module.emitError() << "cannot read the weights written in "
                                  << dir << ": " << bytes.getError().message();
      src.manifest["weights_digest"] = dynrt::weightsDigest(
          (*bytes)->getBufferStart(), (*bytes)->getBufferSize());
    }
  }
  finishModuleSource(toolchain.target(), src);
  src.source += toolchain.recordSource(opts);
  if (!writeFile(source, src.source))
    return module.emitError() << "cannot write the generated source in " << dir;

  if (failed(toolchain.compile(module, opts, dir.str().str(), source, tmpSo))) {
    llvm::sys::fs::remove(tmpSo);
    return failure();
  }
  if (!src.weightNames.empty() && !opts.embedWeights) {
    llvm::SmallString<256> sidecar(llvm::sys::path::parent_path(out));
    llvm::sys::path::append(sidecar, sidecarName);
    // Copied under a temporary name, then renamed: a killed build leaves the
    // old sidecar or the new one, whole. (Killed between this rename and the
    // .so's, the old .so's digest refuses the new sidecar by name.)
    std::string sidecarTmp = (sidecar + ".tmp").str();
    std::error_code ec = llvm::sys::fs::copy_file(weights, sidecarTmp);
    if (!ec)
      ec = llvm::sys::fs::rename(sidecarTmp, sidecar);
    if (ec) {
      llvm::sys::fs::remove(sidecarTmp);
      llvm::sys::fs::remove(tmpSo);
      return module.emitError()
             << "cannot write weights '" << sidecar << "': " << ec.message();
    }
    progress("wrote weights " + sidecar + " (" +
             llvm::Twine(src.weightNames.size()) + " tensors)");
  } else if (!src.weightNames.empty()) {
    progress("embedded " + llvm::Twine(src.weightNames.size()) +
             " weight tensors in the .so");
  }
  if (auto ec = llvm::sys::fs::rename(tmpSo, out))
    return module.emitError()
           << "cannot write '" << out << "': " << ec.message();
  llvm::sys::fs::remove_directories(dir);
  double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  progress("wrote " + out + " in " + llvm::formatv("{0:f2}", secs).str() +
           " s");
  return success();
}

} // namespace codegen
} // namespace dynoc
