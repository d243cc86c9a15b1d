//===- CpuBuild.cpp - the CPU toolchain: generated C++ -> model .so -------===//
#include "dynoc/Codegen/Build.h"
#include "dynoc/CodegenCPU/CpuCodegen.h"
#include "dynoc/IR/GraphAttrs.h"
#include "dynrt/cpu_features.h"
#include "dynrt/safetensors.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <fstream>

using namespace mlir;

namespace dynoc {
namespace {
using codegen::progress;
using codegen::writeFile;

const char kPrelude[] =
#include "lib/codegen_cpu/prelude.inc"
    ;

/// The kernel prelude, precompiled (a GCC/Clang .gch) once per compiler,
/// flags and prelude text into ~/.cache/dynoc/pch/<hash>/: compiling it is most
/// of a small model's build time. Returns the directory holding the header and
/// its .gch, or "" if there is no cache (the build then compiles the prelude).
std::string precompiledPrelude(const std::string &compiler,
                               const std::vector<std::string> &flags) {
  const char *base = getenv("XDG_CACHE_HOME");
  const char *home = getenv("HOME");
  if (!base && !home)
    return "";
  std::string key = compiler + '\n' + kPrelude;
  for (const auto &f : flags)
    key += '\n' + f;
  llvm::SmallString<256> dir(base ? base : std::string(home) + "/.cache");
  llvm::sys::path::append(dir, "dynoc", "pch",
                          llvm::utohexstr(std::hash<std::string>()(key)));
  std::string header = (dir + "/dynoc_kernels.h").str(), gch = header + ".gch";
  if (llvm::sys::fs::exists(gch))
    return dir.str().str();
  if (llvm::sys::fs::create_directories(dir) || !writeFile(header, kPrelude))
    return "";
  progress("precompiling the kernel prelude (once per compiler and flags) "
           "into " +
           dir);
  // Written under a unique name and renamed: concurrent builds never see a
  // half-written .gch.
  std::string tmp =
      gch + "." + std::to_string(llvm::sys::Process::getProcessId());
  std::vector<std::string> argv = {compiler};
  argv.insert(argv.end(), flags.begin(), flags.end());
  argv.insert(argv.end(), {"-x", "c++-header", header, "-o", tmp});
  std::vector<llvm::StringRef> args(argv.begin(), argv.end());
  std::optional<llvm::StringRef> quiet[] = {std::nullopt, llvm::StringRef(""),
                                            llvm::StringRef("")};
  if (llvm::sys::ExecuteAndWait(compiler, args, std::nullopt, quiet) != 0 ||
      llvm::sys::fs::rename(tmp, gch)) {
    llvm::sys::fs::remove(tmp);
    return "";
  }
  return dir.str().str();
}

/// An instruction-set level `dynoc build --cpu` takes: its -march flags and
/// the features its code may use (GCC's x86-64-v3/v4 micro-architecture
/// levels; docs/passes.md, "Portable builds").
struct CpuLevel {
  const char *name;
  std::vector<std::string> march;
  std::vector<std::string> features;
};

const std::vector<CpuLevel> &cpuLevels() {
  static const std::vector<std::string> v3 = {
      "popcnt", "sse4.2", "avx",  "avx2",  "fma",
      "bmi",    "bmi2",   "f16c", "lzcnt", "movbe"};
  static const std::vector<CpuLevel> levels = [] {
    std::vector<std::string> v4 = v3;
    v4.insert(v4.end(),
              {"avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"});
    // native: the build machine's features, as the runtime detects them.
    std::vector<std::string> host;
    for (const std::string &f : dynrt::knownCpuFeatures())
      if (dynrt::cpuHasFeature(f))
        host.push_back(f);
    return std::vector<CpuLevel>{
        {"native", {"-march=native"}, host},
        {"x86-64-v4", {"-march=x86-64-v4", "-mtune=generic"}, v4},
        {"x86-64-v3", {"-march=x86-64-v3", "-mtune=generic"}, v3},
        {"generic", {"-march=x86-64", "-mtune=generic"}, {}},
    };
  }();
  return levels;
}

const CpuLevel *findCpuLevel(const std::string &name) {
  for (const CpuLevel &l : cpuLevels())
    if (l.name == name)
      return &l;
  return nullptr;
}

/// The compiler flags of a build at `level`.
std::vector<std::string> compileFlags(const codegen::BuildOptions &opts,
                                      const CpuLevel &level) {
  std::vector<std::string> flags = {"-O" + std::to_string(opts.optLevel),
                                    "-std=c++17"};
  flags.insert(flags.end(), level.march.begin(), level.march.end());
  flags.insert(flags.end(), {"-fPIC", "-fopenmp", "-fvisibility=hidden"});
  return flags;
}

/// C++ through the host compiler, with OpenMP, oneDNN and Sleef.
class CpuToolchain final : public codegen::Toolchain {
public:
  FailureOr<nlohmann::json>
  buildRecord(ModuleOp module,
              const codegen::BuildOptions &opts) const override {
    const CpuLevel *level = findCpuLevel(opts.cpu);
    if (!level) {
      std::string known;
      for (const CpuLevel &l : cpuLevels())
        known += (known.empty() ? "" : ", ") + std::string(l.name);
      return module.emitError() << "dynoc build: unknown --cpu '" << opts.cpu
                                << "' (known: " << known << ")";
    }
    return nlohmann::json{{"target", "cpu"},
                          {"cpu", level->name},
                          {"cpu_features", level->features},
                          {"compile_flags", compileFlags(opts, *level)},
                          {"libraries", {"libdnnl", "libsleef", "libgomp"}}};
  }
  std::string recordSource(const codegen::BuildOptions &opts) const override {
    const CpuLevel *level = findCpuLevel(opts.cpu);
    return "\n// What the code needs of the CPU, read by libdynrt before it "
           "loads the model.\n"
           "__attribute__((used, section(\".dynoc.cpu\"))) static const char "
           "kDynocCpu[] = \"" +
           dynrt::cpuRecord(level->name, level->features) + "\";\n";
  }
  const codegen::Target &target() const override { return cpuTarget(); }
  std::string sourceFileName() const override { return "model.cpp"; }
  LogicalResult compile(ModuleOp module, const codegen::BuildOptions &opts,
                        const std::string &dir, const std::string &source,
                        const std::string &so) const override {
    std::string compiler = opts.compiler;
    if (compiler.empty())
      compiler = getenv("CXX") ? getenv("CXX") : "c++";
    auto exe = llvm::sys::findProgramByName(compiler);
    if (!exe)
      return module.emitError()
             << "C++ compiler '" << compiler
             << "' not found: install one (Debian/Ubuntu: apt-get install g++) "
                "or set CXX";
    const CpuLevel *level = findCpuLevel(opts.cpu);
    if (!level)
      return module.emitError()
             << "dynoc build: unknown --cpu '" << opts.cpu << "'";
    std::vector<std::string> flags = compileFlags(opts, *level);
    // oneDNN and Sleef: those an installed wheel carries (the versions the
    // kernels are written and tested against), else the system's.
    std::vector<std::string> libraries = {"-ldnnl", "-lsleef"};
    if (std::string carried = codegen::bundledToolchain(); !carried.empty()) {
      flags.push_back("-I" + carried + "/include");
      libraries = {"-L" + carried + "/lib", "-l:libdnnl.so.2",
                   "-l:libsleef.so.3", "-Wl,-rpath," + carried + "/lib"};
    }
    // `#include "dynoc_kernels.h"` looks beside model.cpp first: with the
    // precompiled prelude there is no copy there.
    std::string includeDir = precompiledPrelude(*exe, flags);
    if (includeDir.empty()) {
      includeDir = dir;
      if (!writeFile(dir + "/dynoc_kernels.h", kPrelude))
        return module.emitError() << "cannot write the prelude in " << dir;
    }
    std::vector<std::string> argv = {*exe};
    argv.insert(argv.end(), flags.begin(), flags.end());
    argv.insert(argv.end(), {"-shared", "-Winvalid-pch", "-I" + includeDir,
                             source, "-o", so});
    argv.insert(argv.end(), libraries.begin(), libraries.end());
    return codegen::runCompiler(module, argv, dir + "/compile.log", source,
                                "C++ compiler");
  }
};

} // namespace

const char *cpuKernelPrelude() { return kPrelude; }

LogicalResult buildCpuModel(ModuleOp module,
                            const codegen::BuildOptions &opts) {
  static const CpuToolchain toolchain;
  return codegen::buildModel(module, toolchain, opts);
}

} // namespace dynoc
