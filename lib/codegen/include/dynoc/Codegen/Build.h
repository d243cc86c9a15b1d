//===- Build.h - graph module -> model .so, for any target ------*- C++ -*-===//
//
// The build both targets share (BuildDriver.cpp): the passes, the module's
// source and manifest for the target, the weights sidecar (or the weights
// linked in), a build directory, and an atomic rename of the finished .so.
// A Toolchain says how the target compiles its source.
//
//===----------------------------------------------------------------------===//
#ifndef DYNOC_CODEGEN_BUILD_H
#define DYNOC_CODEGEN_BUILD_H

#include "dynoc/Codegen/Target.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LogicalResult.h"
#include "llvm/ADT/Twine.h"

#include <nlohmann/json.hpp>

#include <string>

namespace dynoc {
namespace codegen {

struct BuildOptions {
  std::string mlirPath;   // the graph file, for locating its weights
  std::string outputPath; // model .so
  int optLevel = 2;
  bool emitSourceOnly = false; // write the generated source and stop
  bool emitMlirOnly = false;   // write the graph after the passes and stop
  bool embedWeights = false;   // link the weights into the .so, no sidecar
  std::string compiler;        // the host C++ compiler; default $CXX, else c++
  std::string arch = "sm_90";  // CUDA: the GPU architecture SASS is built for
  bool allowTf32 = false;      // CUDA: f32 GEMMs on TF32 tensor cores
  /// CPU: the instruction-set level the code is built for: "native" (the
  /// build machine's), "x86-64-v4", "x86-64-v3" or "generic" (docs/passes.md).
  std::string cpu = "native";
  /// The size in MiB of the buckets a graph's all-reduces merge into (DDP's
  /// bucket_cap_mb; 0: one all-reduce per tensor, as captured).
  double bucketCapMb = 25.0;
};

class Toolchain {
public:
  virtual ~Toolchain() = default;
  virtual const Target &target() const = 0;
  /// The generated source's file name in the build directory.
  virtual std::string sourceFileName() const = 0;
  /// Compiles `source` (in `dir`, which it may write its prelude into) into
  /// the shared object `so`. Errors go to `module`'s diagnostics.
  virtual mlir::LogicalResult compile(mlir::ModuleOp module,
                                      const BuildOptions &options,
                                      const std::string &dir,
                                      const std::string &source,
                                      const std::string &so) const = 0;
  /// How the code is built and what it needs where it runs, for the
  /// manifest's "build" record (the driver adds the dynoc version); an
  /// invalid option is an error at `module`.
  virtual mlir::FailureOr<nlohmann::json>
  buildRecord(mlir::ModuleOp module, const BuildOptions &options) const = 0;
  /// Source appended to the model: records the runtime reads before loading
  /// it (the CPU features, in an ELF section). Empty by default.
  virtual std::string recordSource(const BuildOptions &) const { return ""; }
};

/// "[dynoc build] <msg>" on stderr, unless a ProgressSilencer is alive.
void progress(const llvm::Twine &msg);

/// While one exists, progress() prints nothing (a check that lowers graphs
/// only to find what fails, as `dynoc explain --target` does).
class ProgressSilencer {
public:
  ProgressSilencer();
  ~ProgressSilencer();
  ProgressSilencer(const ProgressSilencer &) = delete;
  ProgressSilencer &operator=(const ProgressSilencer &) = delete;
};
/// The folder of what an installed wheel carries for model builds, beside
/// its dynoc binary (dynoc/_toolchain: oneDNN's and Sleef's headers and
/// libraries, the cuDNN frontend's headers; tools/make_wheel.py), or "" when
/// the binary is not a wheel's (a checkout uses the system's).
/// $DYNOC_TOOLCHAIN_HOME overrides it.
std::string bundledToolchain();
/// Writes `text` to `path`; false if it could not.
bool writeFile(const std::string &path, llvm::StringRef text);
/// The last `maxBytes` of the file at `path` (a compiler's log).
std::string readTail(const std::string &path, size_t maxBytes);
/// Runs `argv` with stdout and stderr to `log`; on failure, an error at
/// `module` naming `what`, the exit code, the kept `source` and the log's
/// tail.
mlir::LogicalResult runCompiler(mlir::ModuleOp module,
                                const std::vector<std::string> &argv,
                                const std::string &log,
                                const std::string &source,
                                const std::string &what);

/// Builds `module` into a model .so (plus its weights sidecar) with
/// `toolchain`, reporting progress on stderr.
mlir::LogicalResult buildModel(mlir::ModuleOp module,
                               const Toolchain &toolchain,
                               const BuildOptions &options);

} // namespace codegen
} // namespace dynoc

#endif // DYNOC_CODEGEN_BUILD_H
