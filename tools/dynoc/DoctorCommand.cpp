//===- DoctorCommand.cpp - dynoc doctor -----------------------------------===//
//
// What this machine has of what dynoc needs: the Python capture runs scripts
// in (with torch), dynoc's Python package, and for model builds a C++
// compiler with oneDNN, Sleef and OpenMP (checked by compiling and linking a
// file that uses them, as a model build does); nvcc for --target=cuda is
// optional. An installed wheel carries none of the build-time ones.
//
//===----------------------------------------------------------------------===//
#include "Commands.h"

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
    fmt::print("ok       {:<26} {}\n", what, detail);
  }
  void bad(const std::string &what, const std::string &hint) {
    ++missing;
    fmt::print("MISSING  {:<26} {}\n", what, hint);
  }
  void note(const std::string &what, const std::string &detail) {
    fmt::print("-        {:<26} {}\n", what, detail);
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
  // message names the one missing.
  struct Lib {
    const char *name, *header, *use, *flag, *hint;
  };
  const Lib libs[] = {
      {"oneDNN", "dnnl.h", "dnnl_version();", "-ldnnl",
       "apt-get install libdnnl-dev"},
      {"Sleef", "sleef.h", "Sleef_expf_u10(1.f);", "-lsleef",
       "apt-get install libsleef-dev"},
      {"OpenMP", "omp.h", "omp_get_max_threads();", "-fopenmp",
       "a compiler with OpenMP (g++ has libgomp)"},
  };
  for (const Lib &lib : libs) {
    llvm::SmallString<128> src, bin;
    llvm::sys::fs::createTemporaryFile("dynoc-doctor", "cpp", src);
    llvm::sys::fs::createTemporaryFile("dynoc-doctor", "out", bin);
    std::ofstream(src.str().str())
        << "#include <" << lib.header << ">\nint main() { " << lib.use
        << " return 0; }\n";
    int rc = runCapturing(
        {*exe, "-x", "c++", src.str().str(), "-o", bin.str().str(), lib.flag},
        out);
    llvm::sys::fs::remove(src);
    llvm::sys::fs::remove(bin);
    if (rc == 0)
      r.ok(lib.name, std::string("compiles and links (") + lib.header + ", " +
                         lib.flag + ")");
    else
      r.bad(lib.name, std::string("a model build needs it: ") + lib.hint +
                          " (" + firstLine(out) + ")");
  }
}

void checkCuda(Report &r) {
  const char *home = getenv("CUDA_HOME");
  std::string nvcc = home ? std::string(home) + "/bin/nvcc" : "";
  if (nvcc.empty() || !llvm::sys::fs::can_execute(nvcc)) {
    auto found = llvm::sys::findProgramByName("nvcc");
    nvcc = found ? *found
                 : (llvm::sys::fs::can_execute("/usr/local/cuda/bin/nvcc")
                        ? "/usr/local/cuda/bin/nvcc"
                        : "");
  }
  if (nvcc.empty()) {
    r.note("nvcc (--target=cuda)", "not found: only needed for CUDA builds");
    return;
  }
  std::string out;
  runCapturing({nvcc, "--version"}, out);
  std::string last = out.substr(0, out.find_last_of('\n'));
  last = last.substr(last.find_last_of('\n') + 1);
  r.ok("nvcc (--target=cuda)", last + " (" + nvcc + ")");
}

} // namespace

void addDoctorCommand(CLI::App &app, int &exitCode) {
  auto *cmd = app.add_subcommand(
      "doctor", "Check what dynoc needs on this machine: the Python capture "
                "runs scripts in, and the C++ compiler, oneDNN, Sleef and "
                "OpenMP a model build compiles and links against (nvcc for "
                "--target=cuda is optional). Exits 1 if something is missing.");
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
