//===- RuntimeCommands.cpp - dynoc inspect / dynoc run (through libdynrt) -===//
#include "Commands.h"

#include "dynrt/dynrt.hpp"
#include "dynrt/npy.h"

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <filesystem>

namespace dynoc::cli {
namespace {

int inspect(const std::string &path) {
  try {
    dynrt::Model model(path);
    auto manifest = nlohmann::json::parse(model.manifest());
    fmt::print("{}\n", manifest.dump(2));
    return 0;
  } catch (const dynrt::Error &e) {
    return fail("inspect", e.what());
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
