//===- main.cpp - the dynoc command-line driver ---------------------------===//
#include "Commands.h"

#include "dynoc/Version.h"
#include "llvm/Config/llvm-config.h"

#include <fmt/core.h>

#include <cstdio>
#include <exception>

int dynoc::cli::fail(const std::string &command, const std::string &message) {
  fmt::print(stderr, "dynoc {}: error: {}\n", command, message);
  return 1;
}

int main(int argc, char **argv) {
  CLI::App app{
      "dynoc: ahead-of-time graph capture and compilation for PyTorch "
      "programs.\n\n"
      "  dynoc capture train.py -o out/     record guarded ATen graphs\n"
      "  dynoc build out/graph_0.mlir -o model.so\n"
      "  dynoc run model.so -i x.npy -o results/\n"
      "  dynoc bench model.so --shape x=8x16   time it on random inputs\n",
      "dynoc"};
  app.set_version_flag("--version", "dynoc " DYNOC_VERSION
                                    " (MLIR/LLVM " LLVM_VERSION_STRING ")");
  app.require_subcommand(1);
  int exitCode = 0;
  dynoc::cli::addCaptureCommand(app, exitCode);
  dynoc::cli::addExplainCommand(app, exitCode);
  dynoc::cli::addBuildCommand(app, exitCode);
  dynoc::cli::addListBackendsCommand(app, exitCode);
  dynoc::cli::addOptCommand(app, exitCode);
  dynoc::cli::addInspectCommand(app, exitCode);
  dynoc::cli::addRunCommand(app, exitCode);
  dynoc::cli::addBenchCommand(app, exitCode);
  dynoc::cli::addDoctorCommand(app, exitCode);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp &e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp &e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion &e) {
    return app.exit(e);
  } catch (const CLI::ParseError &e) {
    fmt::print(stderr, "dynoc: error: {}\nRun 'dynoc --help' for usage.\n",
               e.what());
    return 2;
  } catch (const std::exception &e) {
    // What a command did not catch: one line and exit 1, never terminate.
    // Files written whole before it are kept.
    fmt::print(stderr, "dynoc: internal error: {} (please report it)\n",
               e.what());
    return 1;
  }
  return exitCode;
}
