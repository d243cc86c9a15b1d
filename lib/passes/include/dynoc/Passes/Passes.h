//===- Passes.h - passes `dynoc opt` and `dynoc build` can run --*- C++ -*-===//
#ifndef DYNOC_PASSES_PASSES_H
#define DYNOC_PASSES_PASSES_H

namespace dynoc {
/// Registers every pass `dynoc opt --pass=` accepts: MLIR's generic cleanups
/// (canonicalize, cse, symbol-dce, ...) for now; dynoc's own passes
/// (decomposition, fusion, memory planning) arrive with the CPU compiler (issue
/// #4).
void registerPasses();
} // namespace dynoc

#endif // DYNOC_PASSES_PASSES_H
