//===- guards.h - checking a variant's inputs and guards --------*- C++ -*-===//
#ifndef DYNRT_GUARDS_H
#define DYNRT_GUARDS_H

#include "dynrt/manifest.h"

#include <dlpack/dlpack.h>

#include <string>

namespace dynrt {
/// Checks that `inputs` (the user inputs) fit the signature of `graph`: device,
/// dtype, rank, static dims, dense row-major layout. Returns false with
/// `failure` naming the input and what is wrong.
bool checkSignature(const GraphSpec &graph, const DLTensor *const *inputs,
                    std::string &failure);

/// Checks every runtime-checkable guard of `graph` on `inputs`. Returns true
/// when all pass; otherwise false with `failure` naming the input, the
/// condition that failed and the guard in the manifest's words.
bool checkGuards(const GraphSpec &graph, const DLTensor *const *inputs,
                 std::string &failure);

/// True if `t` is dense and row-major (NULL strides, or strides that say so).
bool isContiguous(const DLTensor &t);
} // namespace dynrt

#endif // DYNRT_GUARDS_H
