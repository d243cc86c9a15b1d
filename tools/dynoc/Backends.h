//===- Backends.h - the backends `dynoc capture` knows -----------*- C++
//-*-===//
#ifndef DYNOC_TOOLS_BACKENDS_H
#define DYNOC_TOOLS_BACKENDS_H

#include <string>
#include <vector>

namespace dynoc::cli {
struct Backend {
  const char *name;
  std::vector<std::string> tags; // "debug", "experimental", as in torch._dynamo
  const char *description;
  bool builds; // capture also builds each graph into a .so
};

const std::vector<Backend> &backends();
const Backend *findBackend(const std::string &name);
} // namespace dynoc::cli

#endif // DYNOC_TOOLS_BACKENDS_H
