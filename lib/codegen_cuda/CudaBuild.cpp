//===- CudaBuild.cpp - the CUDA toolchain: generated CUDA C++ -> model .so ===//
//
// nvcc compiles the generated source, which includes the kernel library's core
// (dynoc_cuda.cuh, written beside it), and links it with the compiled kernel
// library (library/*.cu: GEMMs, normalizations, attention, convolutions) into
// a .so that carries SASS for the named architecture plus its PTX (which newer
// GPUs compile at load). The library is compiled once per nvcc, flags and
// library text into the user's cache, in parallel, so a model's build compiles
// only its own kernels. The build machine needs nvcc and cuBLASLt's headers
// and library (cuDNN's too for a graph with a convolution), no GPU.
//
//===----------------------------------------------------------------------===//
#include "dynoc/CodegenCUDA/CudaCodegen.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <thread>

using namespace mlir;

namespace dynoc {
namespace {
using codegen::progress;
using codegen::writeFile;

const char kPrelude[] =
#include "lib/codegen_cuda/prelude.inc"
    ;

struct LibraryFile {
  const char *name;
  const char *text;
};
// The kernel library's header and sources (lib/codegen_cuda/prelude/library).
const LibraryFile kLibrary[] = {
#include "lib/codegen_cuda/library.inc"
};
constexpr const char *kLibraryArchive = "libdynoc_cuda.a";

// The library's translation units: a source compiled once per element type
// it names (-DDYNOC_TYPE=...), or once. An archive member per type means a
// model's .so links only the kernels of the types it uses.
struct LibraryUnit {
  const char *source;
  std::vector<const char *> types;
};
const LibraryUnit kLibraryUnits[] = {
    {"core.cu", {}},
    {"gemm.cu", {"float", "bf16", "f16"}},
    {"nn.cu", {"float", "bf16", "f16"}},
    {"conv.cu", {"float", "bf16", "f16"}},
    {"sdpa.cu", {"bf16", "f16"}},
    {"data.cu",
     {"float", "double", "bf16", "f16", "int64_t", "int32_t", "bool"}},
};

// The cuBLAS release bootstrap installs (tools/bootstrap.sh): the CUDA 13.0
// stack of the GPU machine runs it.
constexpr const char *kCublasVersion = "13.1.2.11";
// The cuDNN release of the GPU machine's torch (its CUDA 13 wheels).
constexpr const char *kCudnnVersion = "9.19.0.56";
// The cuDNN frontend's headers (attention through cuDNN's graph API).
constexpr const char *kCudnnFrontendVersion = "1.16.0";

std::string findNvcc() {
  if (const char *env = getenv("NVCC"))
    return env;
  if (auto p = llvm::sys::findProgramByName("nvcc"))
    return *p;
  std::string home =
      getenv("CUDA_HOME") ? getenv("CUDA_HOME") : "/usr/local/cuda";
  std::string nvcc = home + "/bin/nvcc";
  return llvm::sys::fs::can_execute(nvcc) ? nvcc : "";
}

/// Where tools/bootstrap.sh installs the CUDA libraries.
std::string dynocCache() {
  const char *base = getenv("XDG_CACHE_HOME");
  const char *home = getenv("HOME");
  return (base ? base : (home ? std::string(home) + "/.cache" : "")) +
         std::string("/dynoc");
}

/// The folder holding include/cublasLt.h and lib/libcublasLt.so.13.
std::string findCublas() {
  if (const char *env = getenv("DYNOC_CUBLAS_HOME"))
    return env;
  return dynocCache() + "/nvidia-cublas-" + kCublasVersion + "/nvidia/cu13";
}

/// The folder holding include/cudnn.h and lib/libcudnn.so.9.
std::string findCudnn() {
  if (const char *env = getenv("DYNOC_CUDNN_HOME"))
    return env;
  return dynocCache() + "/nvidia-cudnn-" + kCudnnVersion + "/nvidia/cudnn";
}

/// The folder holding include/cudnn_frontend.h: an installed wheel carries
/// it (header-only).
std::string findCudnnFrontend() {
  if (const char *env = getenv("DYNOC_CUDNN_FRONTEND_HOME"))
    return env;
  if (std::string carried = codegen::bundledToolchain(); !carried.empty() &&
      llvm::sys::fs::exists(carried + "/cudnn-frontend/include"))
    return carried + "/cudnn-frontend";
  return dynocCache() + "/nvidia-cudnn-frontend-" + kCudnnFrontendVersion;
}

bool hasConvolution(ModuleOp module) {
  bool found = false;
  module.walk([&](Operation *op) {
    llvm::StringRef n = op->getName().getStringRef();
    found |= n == "aten.convolution" || n == "aten.convolution_backward";
  });
  return found;
}

/// Runs `commands`, as many at a time as the machine has hardware threads,
/// each with its output to the log of the same index. Returns the index of
/// the first that failed (its exit code in `rc`), or -1.
int runAll(const std::vector<std::vector<std::string>> &commands,
           const std::vector<std::string> &logs, int &rc) {
  std::vector<int> codes(commands.size(), 0);
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i = next++; i < commands.size(); i = next++) {
      std::vector<llvm::StringRef> args(commands[i].begin(), commands[i].end());
      std::optional<llvm::StringRef> redirects[] = {
          std::nullopt, llvm::StringRef(logs[i]), llvm::StringRef(logs[i])};
      codes[i] = llvm::sys::ExecuteAndWait(commands[i].front(), args,
                                           std::nullopt, redirects);
    }
  };
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < std::max(1u, std::thread::hardware_concurrency());
       ++t)
    threads.emplace_back(worker);
  for (std::thread &t : threads)
    t.join();
  for (size_t i = 0; i < codes.size(); ++i)
    if (codes[i] != 0) {
      rc = codes[i];
      return int(i);
    }
  return -1;
}

/// The kernel library (kLibrary) compiled with nvcc's `flags` into an archive,
/// once per nvcc, flags and library text: in the user's cache
/// (~/.cache/dynoc/cuda-library/<hash>/), or in `buildDir` without one. Its
/// convolutions only `withConv` (they need cuDNN's headers), its cuDNN
/// attention only `withSdpa` (cuDNN's and the cuDNN frontend's).
FailureOr<std::string> kernelLibrary(ModuleOp module, const std::string &nvcc,
                                     const std::vector<std::string> &flags,
                                     bool withConv, bool withSdpa,
                                     const std::string &buildDir) {
  std::string key = nvcc;
  llvm::sys::fs::file_status st;
  if (!llvm::sys::fs::status(nvcc, st))
    key += "@" + std::to_string(
                     st.getLastModificationTime().time_since_epoch().count());
  for (const auto &f : flags)
    key += '\n' + f;
  key += withConv ? "\nconv" : "\nno-conv";
  key += withSdpa ? "\nsdpa" : "\nno-sdpa";
  for (const LibraryFile &f : kLibrary)
    key += std::string("\n") + f.name + '\n' + f.text;
  std::string cache = dynocCache();
  std::string dir = cache == "/dynoc"
                        ? buildDir + "/library"
                        : cache + "/cuda-library/" +
                              llvm::utohexstr(std::hash<std::string>()(key));
  std::string archive = dir + "/" + kLibraryArchive;
  if (llvm::sys::fs::exists(archive))
    return archive;
  // Compiled in a folder of this process's and renamed: concurrent builds
  // never see half an archive.
  std::string tmp =
      dir + ".tmp" + std::to_string(llvm::sys::Process::getProcessId());
  llvm::sys::fs::remove_directories(tmp);
  if (llvm::sys::fs::create_directories(tmp))
    return module.emitError() << "dynoc build (cuda): cannot create '" << tmp
                              << "' for the kernel library";
  progress("compiling the CUDA kernel library (once per nvcc and flags) into " +
           dir);
  auto start = std::chrono::steady_clock::now();
  std::vector<std::vector<std::string>> commands;
  std::vector<std::string> logs, objects;
  for (const LibraryFile &f : kLibrary) {
    std::string path = tmp + "/" + f.name;
    if (!writeFile(path, f.text))
      return module.emitError()
             << "dynoc build (cuda): cannot write '" << path << "'";
  }
  for (const LibraryUnit &unit : kLibraryUnits) {
    llvm::StringRef name(unit.source);
    if ((name == "conv.cu" && !withConv) || (name == "sdpa.cu" && !withSdpa))
      continue;
    std::vector<const char *> types = unit.types;
    if (types.empty())
      types.push_back(nullptr);
    for (const char *type : types) {
      std::string object = tmp + "/" + name.drop_back(3).str() +
                           (type ? std::string("_") + type : "") + ".o";
      std::vector<std::string> argv = {nvcc};
      argv.insert(argv.end(), flags.begin(), flags.end());
      if (type)
        argv.push_back(std::string("-DDYNOC_TYPE=") + type);
      argv.insert(argv.end(),
                  {"-I" + tmp, "-c", tmp + "/" + unit.source, "-o", object});
      commands.push_back(std::move(argv));
      logs.push_back(object + ".log");
      objects.push_back(object);
    }
  }
  int rc = 0;
  int bad = runAll(commands, logs, rc);
  if (bad >= 0)
    return module.emitError()
           << "dynoc build (cuda): the CUDA compiler (nvcc) failed on the "
              "kernel library's "
           << llvm::sys::path::filename(objects[bad]) << " (exit " << rc
           << "); sources kept in " << tmp << "\n"
           << codegen::readTail(logs[bad], 2000);
  auto ar = llvm::sys::findProgramByName("ar");
  if (!ar)
    return module.emitError()
           << "dynoc build (cuda): 'ar' (binutils) not found for the kernel "
              "library's archive";
  std::vector<std::string> arArgv = {*ar, "rcs", tmp + "/" + kLibraryArchive};
  arArgv.insert(arArgv.end(), objects.begin(), objects.end());
  if (failed(codegen::runCompiler(module, arArgv, tmp + "/ar.log",
                                  tmp + "/" + kLibraryArchive,
                                  "archiver (ar)")))
    return failure();
  if (llvm::sys::fs::rename(tmp, dir)) {
    // Another build finished it first; use theirs.
    llvm::sys::fs::remove_directories(tmp);
    if (!llvm::sys::fs::exists(archive))
      return module.emitError() << "dynoc build (cuda): cannot move the "
                                   "kernel library into '"
                                << dir << "'";
  }
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  progress("compiled the CUDA kernel library in " +
           llvm::formatv("{0:f1}", seconds) + " s");
  return archive;
}

/// Whether a value of the module is a bf16/f16 tensor: only then does the
/// model's source need CUDA's 2-byte float headers.
bool hasHalfTypes(ModuleOp module) {
  bool found = false;
  auto half = [](Type t) {
    auto rt = t.dyn_cast<RankedTensorType>();
    return rt && (rt.getElementType().isBF16() || rt.getElementType().isF16());
  };
  module.walk([&](Operation *op) {
    for (Type t : op->getResultTypes())
      found |= half(t);
    for (Region &r : op->getRegions())
      for (Block &b : r)
        for (BlockArgument a : b.getArguments())
          found |= half(a.getType());
  });
  return found;
}

class CudaToolchain final : public codegen::Toolchain {
public:
  const codegen::Target &target() const override { return cudaTarget(); }
  std::string sourceFileName() const override { return "model.cu"; }
  FailureOr<nlohmann::json>
  buildRecord(ModuleOp, const codegen::BuildOptions &opts) const override {
    return nlohmann::json{
        {"target", "cuda"},
        {"arch", opts.arch},
        {"allow_tf32", opts.allowTf32},
        {"libraries", {"libcudart", "libcublasLt", "libcudnn"}}};
  }
  LogicalResult compile(ModuleOp module, const codegen::BuildOptions &opts,
                        const std::string &dir, const std::string &source,
                        const std::string &so) const override {
    std::string nvcc = findNvcc();
    if (nvcc.empty())
      return module.emitError()
             << "dynoc build (cuda): nvcc not found (set NVCC or CUDA_HOME, "
                "or put it on the PATH)";
    std::string cublas = findCublas();
    if (!llvm::sys::fs::exists(cublas + "/include/cublasLt.h"))
      return module.emitError()
             << "dynoc build (cuda): cuBLASLt headers not found in '" << cublas
             << "/include' (run tools/bootstrap.sh, or set DYNOC_CUBLAS_HOME "
                "to the folder holding include/ and lib/ of cuBLAS 13)";
    // cuDNN is a dependency of a model only where it has a convolution.
    const bool cudnn = hasConvolution(module);
    std::string cudnnHome = findCudnn();
    const bool haveCudnn =
        llvm::sys::fs::exists(cudnnHome + "/include/cudnn.h");
    if (cudnn && !haveCudnn)
      return module.emitError()
             << "dynoc build (cuda): the graph has convolutions and cuDNN's "
                "headers are not in '"
             << cudnnHome
             << "/include' (run tools/bootstrap.sh, or set DYNOC_CUDNN_HOME to "
                "the folder holding include/ and lib/ of cuDNN 9)";
    static const std::regex archPattern("sm_[0-9]+a?");
    if (!std::regex_match(opts.arch, archPattern))
      return module.emitError() << "dynoc build (cuda): --arch '" << opts.arch
                                << "' is not of the form sm_90";
    if (!writeFile(dir + "/dynoc_cuda.cuh", kPrelude))
      return module.emitError() << "cannot write the CUDA prelude in " << dir;
    std::string compute = "compute_" + opts.arch.substr(3);
    const std::vector<std::string> flags = {
        "-O" + std::to_string(std::max(opts.optLevel, 1)), "-std=c++17",
        "--extended-lambda", "-Xcompiler", "-fPIC,-fvisibility=hidden",
        // SASS for the named GPU, PTX for newer ones.
        "-gencode=arch=" + compute + ",code=" + opts.arch,
        "-gencode=arch=" + compute + ",code=" + compute,
        "-DDYNOC_ALLOW_TF32=" + std::string(opts.allowTf32 ? "1" : "0"),
        "-diag-suppress=177", // a generated variable left unused
        // zstd-compressed device code: a third of the size, decompressed once
        // at load.
        "--compress-mode=size", "-I" + cublas + "/include"};
    std::vector<std::string> libraryFlags = flags;
    if (haveCudnn)
      libraryFlags.push_back("-I" + cudnnHome + "/include");
    // bf16/f16 attention through cuDNN where its frontend's headers are
    // installed too (libcudnn is opened at run time, not linked).
    std::string frontend = findCudnnFrontend();
    const bool withSdpa =
        haveCudnn &&
        llvm::sys::fs::exists(frontend + "/include/cudnn_frontend.h");
    if (withSdpa)
      libraryFlags.insert(libraryFlags.end(), {"-I" + frontend + "/include",
                                               "-DDYNOC_CUDNN_SDPA=1"});
    FailureOr<std::string> library = kernelLibrary(
        module, nvcc, libraryFlags, haveCudnn, withSdpa, dir);
    if (failed(library))
      return failure();
    // The model's own kernels, then the link with the library's objects it
    // calls. Without relocatable device code there is nothing to device-link.
    std::string object = dir + "/model.o";
    std::vector<std::string> argv = {nvcc};
    argv.insert(argv.end(), flags.begin(), flags.end());
    argv.insert(argv.end(), {"-DDYNOC_HALF_TYPES=" +
                                 std::string(hasHalfTypes(module) ? "1" : "0"),
                             "-I" + dir, "-c", source, "-o", object});
    if (failed(codegen::runCompiler(module, argv, dir + "/compile.log", source,
                                    "CUDA compiler (nvcc)")))
      return failure();
    std::vector<std::string> link = {
        nvcc, "-shared", "-nodlink", object, *library, "-o", so, "-cudart",
        "shared", "-L" + cublas + "/lib", "-l:libcublasLt.so.13",
        // A symbol the library lacks (a type it was not instantiated for) is
        // an error here, not at load.
        "-Xlinker", "--no-undefined",
        // The GPU machine's libraries are found through the process (torch
        // loads them) or the library path; $ORIGIN for a copy beside the .so.
        "-Xlinker", "-rpath,$ORIGIN"};
    if (cudnn)
      link.insert(link.end(), {"-L" + cudnnHome + "/lib", "-l:libcudnn.so.9"});
    return codegen::runCompiler(module, link, dir + "/link.log", source,
                                "linker (nvcc)");
  }
};

} // namespace

const char *cudaKernelPrelude() { return kPrelude; }

std::vector<CudaBuildDependency> cudaBuildDependencies() {
  std::string nvcc = findNvcc(), cublas = findCublas(), cudnn = findCudnn(),
              frontend = findCudnnFrontend();
  auto has = [](const std::string &path) {
    return llvm::sys::fs::exists(path);
  };
  return {
      {"nvcc", nvcc, !nvcc.empty(), true,
       "the CUDA toolkit's compiler (apt-get install nvidia-cuda-toolkit, or "
       "NVIDIA's cuda-nvcc-13-0; set CUDA_HOME or NVCC)"},
      {"cuBLASLt 13", cublas, has(cublas + "/include/cublasLt.h"), true,
       "pip install nvidia-cublas (torch's CUDA wheels bring it), or set "
       "DYNOC_CUBLAS_HOME to the folder holding include/ and lib/"},
      {"cuDNN 9", cudnn, has(cudnn + "/include/cudnn.h"), false,
       "convolutions and bf16/f16 attention: pip install nvidia-cudnn-cu13 "
       "(torch's CUDA wheels bring it), or set DYNOC_CUDNN_HOME"},
      {"cuDNN frontend", frontend, has(frontend + "/include/cudnn_frontend.h"),
       false,
       "bf16/f16 attention through cuDNN: pip install nvidia-cudnn-frontend "
       "(header-only; the wheel carries it), or set "
       "DYNOC_CUDNN_FRONTEND_HOME"},
  };
}

LogicalResult buildCudaModel(ModuleOp module,
                             const codegen::BuildOptions &opts) {
  static const CudaToolchain toolchain;
  return codegen::buildModel(module, toolchain, opts);
}

} // namespace dynoc
