//===- Backends.cpp - the backends `dynoc capture` knows ------------------===//
#include "Backends.h"
#include "Commands.h"

#include "dynoc/CodegenCUDA/CudaCodegen.h"

#include <algorithm>

#include <fmt/core.h>
#include <fmt/ranges.h>

namespace dynoc::cli {

const std::vector<Backend> &backends() {
  static const std::vector<Backend> list = {
      {"eager",
       {"debug"},
       "record the graphs only; the program runs eagerly",
       false},
      {"inductor",
       {},
       "record the graphs and build each (and each training step graph) into a "
       "CPU .so",
       true},
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
  cmd->add_flag("--all", *all,
                "include backends tagged 'debug' or 'experimental' (as "
                "torch._dynamo.list_backends(exclude_tags=None))");
  cmd->callback([all, &exitCode] {
    for (const Backend &b : backends()) {
      bool hidden = std::any_of(b.tags.begin(), b.tags.end(), [](auto &t) {
        return t == "debug" || t == "experimental";
      });
      if (hidden && !*all)
        continue;
      std::string tags =
          b.tags.empty() ? "" : fmt::format("[{}]", fmt::join(b.tags, ", "));
      fmt::print("{:<10} {:<16} {}\n", b.name, tags, b.description);
    }
    // What `dynoc build --target` compiles for (docs/cuda.md for the GPU).
    fmt::print("\nbuild targets (dynoc build --target):\n");
    fmt::print("  {:<6} C++ with OpenMP, oneDNN and Sleef: every op of "
               "docs/status.md; f32, f64, integers, bool; bf16/f16 computed "
               "in f32\n",
               "cpu");
    fmt::print("  {:<6} CUDA C++ through nvcc for --arch (default sm_90) plus "
               "PTX; cuBLASLt GEMMs and cuDNN convolutions (f32, TF32 only "
               "with --allow-tf32; bf16/f16 with f32 accumulation); CUDA "
               "graphs at run time; {} ops; no transposed convolution, "
               "average pooling or index ops yet (a located build error)\n",
               "cuda", cudaSupportedOps().size());
    exitCode = 0;
  });
}

} // namespace dynoc::cli
