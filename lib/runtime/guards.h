//===- guards.h - checking a variant's guards on run inputs -----*- C++ -*-===//
#ifndef DYNRT_GUARDS_H
#define DYNRT_GUARDS_H

#include "dynrt/manifest.h"

#include <dlpack/dlpack.h>

#include <string>

namespace dynrt {
/// Checks every runtime-checkable guard of `graph` on `inputs` (its user
/// inputs). Returns true when all pass; otherwise false with `failure` naming
/// the guard in the manifest's words and what the input had instead.
bool checkGuards(const GraphSpec &graph, const DLTensor *const *inputs,
                 std::string &failure);
} // namespace dynrt

#endif // DYNRT_GUARDS_H
