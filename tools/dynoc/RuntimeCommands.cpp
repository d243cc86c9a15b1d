//===- RuntimeCommands.cpp - dynoc inspect / dynoc run (through libdynrt) -===//
#include "Commands.h"

#include "dynrt/dynrt.hpp"
#include "dynrt/npy.h"

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <optional>

namespace dynoc::cli {
namespace {

/// The manifest embedded in a device model, read from the file's bytes: such
/// a model loads only where its device libraries are (a CUDA model needs
/// libcudart and libcublasLt), and its manifest is plain text in .rodata.
std::optional<nlohmann::json> manifestFromBytes(const std::string &path) {
  std::ifstream f(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(f)),
                    std::istreambuf_iterator<char>());
  // The manifest is a NUL-terminated JSON text with one-space indentation:
  // each "{\n \"" may start it (nested objects are indented deeper).
  for (size_t at = bytes.find("{\n \""); at != std::string::npos;
       at = bytes.find("{\n \"", at + 1)) {
    size_t end = bytes.find('\0', at);
    auto j = nlohmann::json::parse(bytes.substr(at, end - at), nullptr, false);
    if (!j.is_discarded() && j.value("format", "") == "dynoc-model")
      return j;
  }
  return std::nullopt;
}

int inspect(const std::string &path) {
  try {
    dynrt::Model model(path);
    auto manifest = nlohmann::json::parse(model.manifest());
    fmt::print("{}\n", manifest.dump(2));
    return 0;
  } catch (const dynrt::Error &e) {
    // A model that needs what this machine lacks (a GPU, a CPU feature) is
    // still shown; a corrupted one is an error.
    auto manifest = manifestFromBytes(path);
    if (!manifest || (manifest->value("device", "cpu") == "cpu" &&
                      e.code() != DYNRT_UNIMPLEMENTED))
      return fail("inspect", e.what());
    fmt::print(stderr,
               "dynoc inspect: note: a {} model that does not load here ({}); "
               "its manifest, read from the file:\n",
               manifest->value("device", "?"), e.what());
    fmt::print("{}\n", manifest->dump(2));
    return 0;
  }
}

int run(const std::string &path, const std::vector<std::string> &inputs,
        const std::string &outDir) {
  std::vector<dynrt::NpyArray> arrays(inputs.size());
  std::vector<DLTensor> views;
  for (size_t i = 0; i < inputs.size(); ++i) {
    std::string error;
    if (!dynrt::readNpy(inputs[i], arrays[i], error))
      return fail("run", error);
    views.push_back(arrays[i].view());
  }
  std::vector<const DLTensor *> ptrs;
  for (auto &v : views)
    ptrs.push_back(&v);
  try {
    dynrt::Model model(path);
    auto outputs = model.run(ptrs);
    std::error_code ec;
    std::filesystem::create_directories(outDir, ec);
    if (ec)
      return fail("run", "cannot create '" + outDir + "': " + ec.message());
    for (size_t i = 0; i < outputs.size(); ++i) {
      std::string file = outDir + "/output_" + std::to_string(i) + ".npy",
                  error;
      if (!dynrt::writeNpy(file, outputs[i]->dl_tensor, error))
        return fail("run", error);
      fmt::print(stderr, "[dynoc run] wrote {}\n", file);
    }
    return 0;
  } catch (const dynrt::Error &e) {
    return fail("run", e.what());
  }
}
} // namespace

void addInspectCommand(CLI::App &app, int &exitCode) {
  auto *cmd = app.add_subcommand("inspect",
                                 "Print the manifest embedded in a model .so.");
  auto path = std::make_shared<std::string>();
  cmd->add_option("MODEL", *path, "model .so built by 'dynoc build'")
      ->required();
  cmd->callback([path, &exitCode] { exitCode = inspect(*path); });
}

void addRunCommand(CLI::App &app, int &exitCode) {
  auto *cmd = app.add_subcommand(
      "run", "Run a model .so through libdynrt on .npy inputs; writes "
             "OUTDIR/output_0.npy, output_1.npy, ...");
  struct Opts {
    std::string model, outDir;
    std::vector<std::string> inputs;
  };
  auto o = std::make_shared<Opts>();
  cmd->add_option("MODEL", o->model, "model .so built by 'dynoc build'")
      ->required();
  cmd->add_option("-i,--input", o->inputs,
                  "a user input as .npy, in captured order (repeat per input)");
  cmd->add_option("-o,--output-dir", o->outDir, "directory for the outputs")
      ->required();
  cmd->callback(
      [o, &exitCode] { exitCode = run(o->model, o->inputs, o->outDir); });
}

} // namespace dynoc::cli
