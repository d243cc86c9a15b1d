//===- DoctorCommand.cpp - dynoc doctor -----------------------------------===//
//
// What this machine has of what dynoc needs: the Python capture runs scripts
// in (with torch), dynoc's Python package, and for model builds a C++
// compiler with oneDNN, Sleef and OpenMP (checked by compiling and linking a
// file that uses them, as a model build does; an installed wheel carries
// oneDNN and Sleef); for --target=cuda, nvcc and the CUDA libraries, checked
// where nvcc is installed.
//
//===----------------------------------------------------------------------===//
#include "Commands.h"

#include "dynoc/Codegen/Build.h"
#include "dynoc/CodegenCUDA/CudaCodegen.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Program.h"

#include <fmt/core.h>

#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>

namespace dynoc::cli {
namespace {

/// Runs `argv`, returning its exit code and its output (stdout and stderr).
int runCapturing(const std::vector<std::string> &argv, std::string &output) {
  llvm::SmallString<128> log;
  llvm::sys::fs::createTemporaryFile("dynoc-doctor", "log", log);
  std::vector<llvm::StringRef> args(argv.begin(), argv.end());
  std::optional<llvm::StringRef> redirects[] = {
      llvm::StringRef(""), llvm::StringRef(log), llvm::StringRef(log)};
  std::string error;
  int rc = llvm::sys::ExecuteAndWait(argv.front(), args, std::nullopt,
                                     redirects, 0, 0, &error);
  std::ifstream in(log.str().str());
  std::stringstream text;
  text << in.rdbuf();
  output = error.empty() ? text.str() : error;
  llvm::sys::fs::remove(log);
  return rc;
}

std::string firstLine(const std::string &text) {
  return text.substr(0, text.find('\n'));
}

struct Report {
  int missing = 0;
  void ok(const std::string &what, const std::string &detail) {
    fmt::print("ok       {:<31} {}\n", what, detail);
  }
  void bad(const std::string &what, const std::string &hint) {
    ++missing;
    fmt::print("MISSING  {:<31} {}\n", what, hint);
  }
  void note(const std::string &what, const std::string &detail) {
    fmt::print("-        {:<31} {}\n", what, detail);
  }
};

void checkPython(Report &r) {
  std::string python = capturePython(), out;
  std::string probe = "import sys, torch; print('Python %d.%d' % "
                      "sys.version_info[:2], 'torch', torch.__version__)";
  if (runCapturing({python, "-c", probe}, out) != 0) {
    r.bad("Python with torch", "'" + python + "' cannot import torch (" +
                                   firstLine(out) +
                                   "); set DYNOC_PYTHON to one that can");
    return;
  }
  std::string line = firstLine(out);
  // The versions lib/capture builds an evaluator for (dynoc/_version.py's
  // SUPPORTED_PYTHONS).
  bool supported = false;
  for (const char *v : {"Python 3.11 ", "Python 3.12 ", "Python 3.13 "})
    supported |= line.rfind(v, 0) == 0;
  if (!supported)
    r.bad("Python with torch",
          line + " at " + python +
              ": capture runs CPython 3.11, 3.12 and 3.13");
  else
    r.ok("Python with torch", line + " (" + python + ")");
  if (capturePythonPath().empty())
    r.bad("dynoc Python package",
          "not found next to the binary; set DYNOC_CAPTURE_PATH");
  else
    r.ok("dynoc Python package", capturePythonPath());
}

void checkCompiler(Report &r) {
  const char *cxxEnv = getenv("CXX");
  std::string cxx = cxxEnv && *cxxEnv ? cxxEnv : "c++";
  auto exe = llvm::sys::findProgramByName(cxx);
  if (!exe) {
    r.bad("C++ compiler", "'" + cxx +
                              "' not found: install g++ (apt-get install g++) "
                              "or set CXX");
    return;
  }
  std::string out;
  runCapturing({*exe, "--version"}, out);
  r.ok("C++ compiler", firstLine(out) + " (" + *exe + ")");
  // What a model's source includes and links, one library at a time so the
  // message names the one missing: oneDNN and Sleef as the wheel carries
  // them, else the system's (CpuBuild.cpp decides the same way).
  const std::string carried = codegen::bundledToolchain();
  struct Lib {
    const char *name, *header, *use;
    std::vector<std::string> flags;
    const char *hint;
  };
  auto linked = [&](const char *soname,
                    const char *systemFlag) -> std::vector<std::string> {
    if (carried.empty())
      return {systemFlag};
    return {"-I" + carried + "/include", "-L" + carried + "/lib",
            std::string("-l:") + soname, "-Wl,-rpath," + carried + "/lib"};
  };
  const Lib libs[] = {
      {"oneDNN", "dnnl.h", "dnnl_version();", linked("libdnnl.so.2", "-ldnnl"),
       "apt-get install libdnnl-dev (Debian/Ubuntu)"},
      {"Sleef", "sleef.h", "Sleef_expf_u10(1.f);",
       linked("libsleef.so.3", "-lsleef"),
       "apt-get install libsleef-dev (Debian/Ubuntu)"},
      {"OpenMP", "omp.h", "omp_get_max_threads();", {"-fopenmp"},
       "g++ brings libgomp (apt-get install g++); with clang, apt-get "
       "install libomp-dev"},
  };
  for (const Lib &lib : libs) {
    llvm::SmallString<128> src, bin;
    llvm::sys::fs::createTemporaryFile("dynoc-doctor", "cpp", src);
    llvm::sys::fs::createTemporaryFile("dynoc-doctor", "out", bin);
    std::ofstream(src.str().str())
        << "#include <" << lib.header << ">\nint main() { " << lib.use
        << " return 0; }\n";
    std::vector<std::string> argv = {*exe, "-x", "c++", src.str().str(),
                                     "-o", bin.str().str()};
    argv.insert(argv.end(), lib.flags.begin(), lib.flags.end());
    int rc = runCapturing(argv, out);
    llvm::sys::fs::remove(src);
    llvm::sys::fs::remove(bin);
    bool own = lib.flags.size() > 1;
    if (rc == 0)
      r.ok(lib.name, std::string("compiles and links (") + lib.header +
                         (own ? ", the wheel's copy in " + carried
                              : ", " + lib.flags.front()) +
                         ")");
    else
      r.bad(lib.name, std::string("a CPU model build needs it: ") +
                          (own ? "the wheel's copy in " + carried +
                                     " does not link; reinstall dynoc"
                               : lib.hint) +
                          " (" + firstLine(out) + ")");
  }
}

/// --target=cuda's needs: all optional while nvcc is absent (a CPU-only
/// machine); with nvcc, what a CUDA build cannot do without is required.
void checkCuda(Report &r) {
  std::vector<CudaBuildDependency> deps = cudaBuildDependencies();
  if (!deps.front().found) {
    r.note("nvcc (--target=cuda)", "not found: only needed for CUDA builds (" +
                                       deps.front().hint + ")");
    return;
  }
  for (const CudaBuildDependency &d : deps) {
    std::string what = d.name + " (--target=cuda)";
    std::string detail = d.where;
    if (d.name == "nvcc") {
      std::string out;
      runCapturing({d.where, "--version"}, out);
      std::string last = out.substr(0, out.find_last_of('\n'));
      detail = last.substr(last.find_last_of('\n') + 1) + " (" + d.where + ")";
    }
    if (d.found)
      r.ok(what, detail);
    else if (d.required)
      r.bad(what, "not in '" + d.where + "': " + d.hint);
    else
      r.note(what, "not found (" + d.hint + ")");
  }
}

} // namespace

void addDoctorCommand(CLI::App &app, int &exitCode) {
  auto *cmd = app.add_subcommand(
      "doctor", "Check what dynoc needs on this machine: the Python capture "
                "runs scripts in, and the C++ compiler, oneDNN, Sleef and "
                "OpenMP a model build compiles and links against (an installed "
                "wheel carries oneDNN and Sleef); where nvcc is installed, "
                "what --target=cuda builds need too (cuBLASLt, cuDNN, the cuDNN "
                "frontend). Names the package to install for each missing one; "
                "exits 1 if something is missing.");
  cmd->callback([&exitCode] {
    Report r;
    checkPython(r);
    checkCompiler(r);
    checkCuda(r);
    if (r.missing)
      fmt::print("\n{} missing: dynoc capture or build will fail until it is "
                 "installed\n",
                 r.missing);
    exitCode = r.missing ? 1 : 0;
  });
}

} // namespace dynoc::cli
