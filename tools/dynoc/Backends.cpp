//===- Backends.cpp - the backends `dynoc capture` knows ------------------===//
#include "Backends.h"
#include "Commands.h"

#include <fmt/core.h>
#include <fmt/ranges.h>

namespace dynoc::cli {

const std::vector<Backend> &backends() {
  static const std::vector<Backend> list = {
      {"eager",
       {"debug"},
       "record the graphs only; the program runs eagerly",
       false},
      {"inductor", {}, "record the graphs and build each into a CPU .so", true},
  };
  return list;
}

const Backend *findBackend(const std::string &name) {
  for (const Backend &b : backends())
    if (name == b.name)
      return &b;
  return nullptr;
}

void addListBackendsCommand(CLI::App &app, int &exitCode) {
  auto *cmd = app.add_subcommand(
      "list-backends",
      "List the backends 'dynoc capture --backend' accepts, with their tags.");
  auto all = std::make_shared<bool>(false);
  cmd->add_flag("--all", *all, "include backends tagged 'experimental'");
  cmd->callback([all, &exitCode] {
    for (const Backend &b : backends()) {
      bool experimental = std::find(b.tags.begin(), b.tags.end(),
                                    "experimental") != b.tags.end();
      if (experimental && !*all)
        continue;
      std::string tags =
          b.tags.empty() ? "" : fmt::format("[{}]", fmt::join(b.tags, ", "));
      fmt::print("{:<10} {:<16} {}\n", b.name, tags, b.description);
    }
    exitCode = 0;
  });
}

} // namespace dynoc::cli
