//===- CudaBuild.cpp - the CUDA toolchain: generated CUDA C++ -> model .so ===//
//
// nvcc compiles the generated source with the kernel library beside it into a
// .so that carries SASS for the named architecture plus its PTX (which newer
// GPUs compile at load). The build machine needs nvcc and cuBLASLt's headers
// and library (cuDNN's too for a graph with a convolution), no GPU.
//
//===----------------------------------------------------------------------===//
#include "dynoc/CodegenCUDA/CudaCodegen.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

#include <cstdlib>
#include <fstream>
#include <regex>

using namespace mlir;

namespace dynoc {
namespace {

const char kPrelude[] =
#include "lib/codegen_cuda/prelude.inc"
    ;

// The cuBLAS release bootstrap installs (tools/bootstrap.sh): the CUDA 13.0
// stack of the GPU machine runs it.
constexpr const char *kCublasVersion = "13.1.2.11";
// The cuDNN release of the GPU machine's torch (its CUDA 13 wheels).
constexpr const char *kCudnnVersion = "9.19.0.56";

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

bool hasConvolution(ModuleOp module) {
  bool found = false;
  module.walk([&](Operation *op) {
    found |= op->getName().getStringRef() == "aten.convolution";
  });
  return found;
}

class CudaToolchain final : public codegen::Toolchain {
public:
  const codegen::Target &target() const override { return cudaTarget(); }
  std::string sourceFileName() const override { return "model.cu"; }
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
    if (cudnn && !llvm::sys::fs::exists(cudnnHome + "/include/cudnn.h"))
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
    std::ofstream prelude(dir + "/dynoc_cuda.cuh", std::ios::binary);
    prelude << kPrelude;
    if (!prelude)
      return module.emitError() << "cannot write the CUDA prelude in " << dir;
    prelude.close();
    std::string compute = "compute_" + opts.arch.substr(3);
    std::vector<std::string> argv = {
        nvcc, "-O" + std::to_string(std::max(opts.optLevel, 1)), "-std=c++17",
        "--extended-lambda", "-shared", "-Xcompiler",
        "-fPIC,-fvisibility=hidden",
        // SASS for the named GPU, PTX for newer ones.
        "-gencode=arch=" + compute + ",code=" + opts.arch,
        "-gencode=arch=" + compute + ",code=" + compute,
        "-DDYNOC_ALLOW_TF32=" + std::string(opts.allowTf32 ? "1" : "0"),
        "-I" + dir, "-I" + cublas + "/include", source, "-o", so, "-cudart",
        "shared", "-L" + cublas + "/lib", "-l:libcublasLt.so.13",
        // The GPU machine's libraries are found through the process (torch
        // loads them) or the library path; $ORIGIN for a copy beside the .so.
        "-Xlinker", "-rpath,$ORIGIN"};
    if (cudnn)
      argv.insert(argv.end(),
                  {"-DDYNOC_USE_CUDNN=1", "-I" + cudnnHome + "/include",
                   "-L" + cudnnHome + "/lib", "-l:libcudnn.so.9"});
    return codegen::runCompiler(module, argv, dir + "/compile.log", source,
                                "CUDA compiler (nvcc)");
  }
};

} // namespace

const char *cudaKernelPrelude() { return kPrelude; }

LogicalResult buildCudaModel(ModuleOp module,
                             const codegen::BuildOptions &opts) {
  static const CudaToolchain toolchain;
  return codegen::buildModel(module, toolchain, opts);
}

} // namespace dynoc
