//===- CaptureCommand.cpp - dynoc capture ---------------------------------===//
//
// Runs the user's script in the project's Python under dynoc's capture module
// (lib/capture), then verifies each graph file it wrote and, for a backend that
// builds, compiles each into a .so beside it. The script's stdout, stderr and
// exit code pass through untouched; dynoc's own messages go to stderr.
//
//===----------------------------------------------------------------------===//
#include "Backends.h"
#include "Commands.h"

#include "dynoc/IR/GraphIO.h"
#include "python/python_config.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <limits.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

namespace dynoc::cli {

static bool isDir(const std::string &p) {
  struct stat st;
  return stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::string capturePythonPath() {
  if (const char *p = getenv("DYNOC_CAPTURE_PATH"))
    return p;
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0)
    return "";
  // The package (python/dynoc) and the capture extension (lib/capture).
  std::string root = std::string(buf, n) + ".runfiles/dynoc";
  if (!isDir(root + "/python/dynoc"))
    return "";
  return root + "/python:" + root + "/lib/capture";
}

std::string capturePython() {
  const char *python = getenv("DYNOC_PYTHON");
  return python && *python ? python : DYNOC_PYTHON;
}

namespace {

int verifyGraphs(const std::string &outDir, const Backend &backend, bool &ok) {
  std::ifstream f(outDir + "/manifest.json");
  if (!f) {
    ok = false;
    return fail("capture", "no manifest.json was written in '" + outDir + "'");
  }
  auto manifest = nlohmann::json::parse(f, nullptr, false);
  if (manifest.is_discarded() || !manifest.contains("graphs")) {
    ok = false;
    return fail("capture", "'" + outDir + "/manifest.json' is malformed");
  }
  // Every graph, then every training step graph (docs/training.md).
  std::vector<std::string> files;
  for (const char *list : {"graphs", "steps"})
    for (auto &g : manifest.value(list, nlohmann::json::array()))
      files.push_back(g.value("mlir", ""));
  size_t failedBuilds = 0;
  for (const std::string &file : files) {
    std::string mlir = outDir + "/" + file;
    mlir::DialectRegistry registry;
    registerGraphDialects(registry);
    mlir::MLIRContext context(registry);
    llvm::SourceMgr sourceMgr;
    mlir::SourceMgrDiagnosticHandler handler(sourceMgr, &context);
    if (!parseGraphFile(mlir, context, sourceMgr)) {
      ok = false;
      return fail("capture",
                  "graph file '" + mlir + "' does not verify (see above)");
    }
    if (backend.builds) {
      std::string so = mlir.substr(0, mlir.size() - 5) + ".so";
      BuildRequest request;
      request.input = mlir;
      request.output = so;
      // A graph dynoc cannot build is the toolchain's gap, not the
      // script's failure: a warning, and the script's exit code stands.
      if (buildGraphFile(request) != 0) {
        ++failedBuilds;
        fmt::print(stderr,
                   "dynoc capture: warning: '{}' was not built (the error "
                   "above names the op and its place); no .so for it\n",
                   mlir);
      }
    }
  }
  if (failedBuilds)
    fmt::print(stderr,
               "dynoc capture: warning: {} of {} graph(s) were not built\n",
               failedBuilds, files.size());
  return 0;
}

/// How `explain` runs a capture: the script's stdout silenced and the report
/// left for the caller to print.
struct CaptureMode {
  bool explain = false;
  std::string entry; // --entry MODULE:FUNC, or empty
  // --max-ops: a whole script's recording budget (0: none). Recorded ops
  // take about 2.5 KB each: the default bounds a capture near 600 MB over
  // the plain run (docs/capture.md, "Memory").
  long maxOps = 250000;
  // --record-all-iterations: a settled training loop's later iterations are
  // recorded too, not only counted (python/dynoc/capture/loop_skip.py).
  bool recordAllIterations = false;
};

/// Holds DIR/.dynoc-capture.lock while a capture (and its builds) write DIR:
/// a second capture into the same directory at once is refused rather than
/// interleaving its files with the first's.
class OutDirLock {
public:
  /// Takes the lock; returns "" or why it could not.
  std::string acquire(const std::string &outDir) {
    std::string path = outDir + "/.dynoc-capture.lock";
    fd_ = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0)
      return "cannot create '" + path + "': " + strerror(errno);
    if (flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      char pid[32] = {};
      ssize_t n = pread(fd_, pid, sizeof pid - 1, 0);
      std::string holder = n > 0 ? std::string(pid, size_t(n)) : "?";
      holder.erase(holder.find_last_not_of(" \n") + 1);
      return "another capture (pid " + holder + ") is writing '" + outDir +
             "' now; wait for it to finish or pass another -o";
    }
    std::string pid = std::to_string(getpid()) + "\n";
    if (ftruncate(fd_, 0) != 0 ||
        pwrite(fd_, pid.data(), pid.size(), 0) != ssize_t(pid.size()))
      return "cannot write '" + path + "': " + strerror(errno);
    return "";
  }
  ~OutDirLock() {
    if (fd_ >= 0)
      close(fd_);
  }

private:
  int fd_ = -1;
};

/// Where one rank of a distributed launch (torchrun and the like set RANK
/// and WORLD_SIZE) writes: a folder of its own under `out` (rank<R>), so
/// that the ranks launched with one command line do not write over each
/// other (docs/distributed.md).
std::string rankOutDir(const std::string &out) {
  const char *rank = getenv("RANK"), *world = getenv("WORLD_SIZE");
  if (!rank || !world || std::atoi(world) < 2 || !*rank ||
      std::string(rank).find_first_not_of("0123456789") != std::string::npos)
    return out;
  std::string dir = out + "/rank" + rank;
  std::fprintf(stderr, "[dynoc capture] rank %s of %s: writing %s\n", rank,
               world, dir.c_str());
  return dir;
}

int capture(const std::string &script, const std::string &outDir,
            const std::string &backendName,
            const std::vector<std::string> &args, CaptureMode mode = {}) {
  const Backend *backend = findBackend(backendName);
  if (!backend)
    return fail("capture", "unknown backend '" + backendName +
                               "' (see 'dynoc list-backends --all')");
  struct stat st;
  if (stat(script.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
    return fail("capture", "script '" + script + "' not found");
  std::string pythonPath = capturePythonPath();
  if (pythonPath.empty())
    return fail("capture", "cannot find dynoc's Python package next to the "
                           "binary; set DYNOC_CAPTURE_PATH");
  std::error_code ec;
  std::filesystem::create_directories(outDir, ec);
  if (ec)
    return fail("capture", "cannot create output directory '" + outDir +
                               "': " + ec.message());
  OutDirLock lock;
  if (std::string busy = lock.acquire(outDir); !busy.empty())
    return fail("capture", busy);
  std::string python = capturePython();
  std::vector<std::string> argv = {python,     "-m",   "dynoc._capture_main",
                                   "--out",    outDir, "--backend",
                                   backendName};
  if (!mode.entry.empty()) {
    argv.push_back("--entry");
    argv.push_back(mode.entry);
  }
  argv.push_back("--max-ops");
  argv.push_back(std::to_string(mode.maxOps));
  if (mode.recordAllIterations)
    argv.push_back("--record-all-iterations");
  argv.push_back("--");
  argv.push_back(script);
  argv.insert(argv.end(), args.begin(), args.end());
  std::string existing = getenv("PYTHONPATH") ? getenv("PYTHONPATH") : "";
  std::string newPath = pythonPath + (existing.empty() ? "" : ":" + existing);
  pid_t pid = fork();
  if (pid < 0)
    return fail("capture", "cannot start Python");
  if (pid == 0) {
    setenv("PYTHONPATH", newPath.c_str(), 1);
    if (mode.explain) {
      setenv("DYNOC_NO_REPORT", "1", 1);
      if (FILE *null = fopen("/dev/null", "w"))
        dup2(fileno(null), STDOUT_FILENO);
    }
    std::vector<char *> cargv;
    for (auto &a : argv)
      cargv.push_back(const_cast<char *>(a.c_str()));
    cargv.push_back(nullptr);
    execv(python.c_str(), cargv.data());
    fmt::print(stderr, "dynoc capture: error: cannot run Python '{}': {}\n",
               python, strerror(errno));
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  int scriptExit =
      WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  // No manifest: Python could not start, or capture itself failed (it said
  // why).
  if (access((outDir + "/manifest.json").c_str(), F_OK) != 0)
    return scriptExit != 0
               ? scriptExit
               : fail("capture",
                      "no manifest.json was written in '" + outDir + "'");
  bool ok = true;
  verifyGraphs(outDir, *backend, ok);
  if (!ok && scriptExit == 0)
    return 1;
  return scriptExit;
}
/// The report's section on what `target` cannot build yet in the captured
/// graphs (`dynoc explain --target`), or "" when every graph builds.
std::string unbuildableReport(const std::filesystem::path &dir,
                              const std::string &target) {
  std::ifstream f(dir / "manifest.json");
  auto manifest = nlohmann::json::parse(f, nullptr, false);
  if (manifest.is_discarded())
    return "";
  std::string lines;
  size_t graphs = 0;
  for (auto &g : manifest.value("graphs", nlohmann::json::array())) {
    std::string file = g.value("mlir", "");
    auto errors = unbuildableOps((dir / file).string(), target);
    if (errors.empty())
      continue;
    ++graphs;
    for (std::string e : errors) {
      // The graph file lives in a temporary directory: name it by itself.
      auto at = e.find(file);
      if (at != std::string::npos)
        e = e.substr(at);
      lines += "    " + e + " (" + g.value("entry", "") + ")\n";
    }
  }
  if (lines.empty())
    return fmt::format("  every graph builds for --target={}\n", target);
  return fmt::format("  cannot build for --target={} yet ({} graph(s)):\n{}",
                     target, graphs, lines);
}

int explain(const std::string &script, const std::vector<std::string> &args,
            const std::string &target) {
  std::error_code ec;
  auto tmp = std::filesystem::temp_directory_path(ec) /
             ("dynoc-explain-" + std::to_string(getpid()));
  if (ec)
    return fail("explain", "no temporary directory: " + ec.message());
  CaptureMode mode;
  mode.explain = true;
  int rc = capture(script, tmp.string(), "eager", args, mode);
  std::ifstream report(tmp / "report.txt");
  if (report)
    fmt::print("{}", std::string(std::istreambuf_iterator<char>(report), {}));
  if (report && !target.empty())
    fmt::print("{}", unbuildableReport(tmp, target));
  std::filesystem::remove_all(tmp, ec);
  return rc;
}
} // namespace

void addExplainCommand(CLI::App &app, int &exitCode) {
  auto *cmd = app.add_subcommand(
      "explain",
      "Run a PyTorch script under capture and print only the report (graph "
      "and break counts, ops, break reasons with locations, recompiles), like "
      "torch._dynamo.explain. The script's own stdout is silenced; nothing is "
      "kept on disk.");
  struct Opts {
    std::string script, target;
    std::vector<std::string> args;
  };
  auto o = std::make_shared<Opts>();
  cmd->add_option("SCRIPT", o->script, "the Python script to run")->required();
  cmd->add_option("ARGS", o->args, "arguments for the script (after --)");
  cmd->add_option("--target", o->target,
                  "also list every op and dtype of the captured graphs that "
                  "this target (cpu or cuda) cannot build yet, each at its "
                  "graph file location, without building")
      ->check(CLI::IsMember({"cpu", "cuda"}));
  cmd->callback(
      [o, &exitCode] { exitCode = explain(o->script, o->args, o->target); });
}

void addCaptureCommand(CLI::App &app, int &exitCode) {
  auto *cmd = app.add_subcommand(
      "capture",
      "Run a PyTorch script under dynoc's instrumented interpreter and record "
      "guarded ATen graphs: DIR/<graph>.mlir, manifest.json, "
      "weights.safetensors "
      "and report.txt. The script's output and exit code are untouched. "
      "Regions: what the script passes to torch.compile / "
      "torch._dynamo.optimize / dynoc.compile; a script that calls none of "
      "them is one region as a whole; --entry narrows it to one function.");
  struct Opts {
    std::string script, out = "dynoc_out", backend = "eager", entry;
    long maxOps = CaptureMode{}.maxOps;
    bool recordAllIterations = false;
    std::vector<std::string> args;
  };
  auto o = std::make_shared<Opts>();
  cmd->add_option("SCRIPT", o->script, "the Python script to run")->required();
  cmd->add_option("-o,--output-dir", o->out, "output directory")
      ->capture_default_str();
  cmd->add_option("--backend", o->backend,
                  "eager: record only; inductor: also build each graph and "
                  "training step graph (.so)")
      ->capture_default_str();
  cmd->add_option("--entry", o->entry,
                  "MODULE:FUNC: every call of this function is the region "
                  "(MODULE is the script's file name without .py, or an "
                  "importable module)");
  cmd->add_option("--max-ops", o->maxOps,
                  "a script captured whole stops recording once its graphs "
                  "hold this many ops and runs on unrecorded (a long loop's "
                  "capture stays bounded in memory and time; repeated "
                  "iterations past it add nothing); 0: no limit")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_flag("--record-all-iterations", o->recordAllIterations,
                "record every iteration of a script's training loop; by "
                "default, once three in a row ran the same ops between the "
                "same breaks, later iterations run unrecorded and are counted "
                "(recording resumes where the loop does something else)");
  cmd->add_option("ARGS", o->args, "arguments for the script (after --)");
  cmd->callback([o, &exitCode] {
    CaptureMode mode;
    mode.entry = o->entry;
    mode.maxOps = o->maxOps;
    mode.recordAllIterations = o->recordAllIterations;
    exitCode =
        capture(o->script, rankOutDir(o->out), o->backend, o->args, mode);
  });
}

} // namespace dynoc::cli
