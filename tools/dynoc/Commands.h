//===- Commands.h - the subcommands of the dynoc driver ---------*- C++ -*-===//
#ifndef DYNOC_TOOLS_COMMANDS_H
#define DYNOC_TOOLS_COMMANDS_H

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace dynoc::cli {

/// Prints "dynoc <command>: error: <message>" on stderr and returns 1, the exit
/// code of every failed subcommand.
int fail(const std::string &command, const std::string &message);

/// Each registers its subcommand on `app`; the callback it installs stores the
/// subcommand's exit code in `exitCode`.
void addCaptureCommand(CLI::App &app, int &exitCode);
void addExplainCommand(CLI::App &app, int &exitCode);
void addBuildCommand(CLI::App &app, int &exitCode);
void addListBackendsCommand(CLI::App &app, int &exitCode);
void addOptCommand(CLI::App &app, int &exitCode);
void addInspectCommand(CLI::App &app, int &exitCode);
void addRunCommand(CLI::App &app, int &exitCode);
void addDoctorCommand(CLI::App &app, int &exitCode);
void addBenchCommand(CLI::App &app, int &exitCode);

/// What `dynoc build` was asked to do.
struct BuildRequest {
  std::string input; // a graph file or a capture directory
  /// Several graph files: one model with a function per file (its input is
  /// the first).
  std::vector<std::string> inputs;
  std::string output; // the model .so (or source, or .mlir with --emit)
  std::string target = "cpu", emit = "so", entry;
  std::string arch = "sm_90";
  std::string cpu = "native"; // CPU instruction-set level (--cpu)
  int optLevel = 2;
  bool embedWeights = false, allowTf32 = false;
  double bucketCapMb = 25.0; // --bucket-cap-mb
};

/// Builds a graph file into a model .so (shared by `build` and `capture
/// --backend=inductor`). Returns 0 or prints the diagnostics and returns 1.
int buildGraphFile(const BuildRequest &request);

/// Where the `dynoc` Python package and its extension are: the binary's Bazel
/// runfiles, unless DYNOC_CAPTURE_PATH says otherwise ("" if not found).
std::string capturePythonPath();
/// The Python capture runs scripts in: DYNOC_PYTHON, else the one the binary
/// was built with.
std::string capturePython();

/// What of the graph file `target` cannot build yet (unsupported ops and
/// dtypes, or a file that does not parse), one "file:line:col: error: ..."
/// line each, found by lowering to source without compiling; empty if it
/// builds.
std::vector<std::string> unbuildableOps(const std::string &mlirPath,
                                        const std::string &target);

} // namespace dynoc::cli

#endif // DYNOC_TOOLS_COMMANDS_H
