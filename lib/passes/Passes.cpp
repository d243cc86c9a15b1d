//===- Passes.cpp - pass registration -------------------------------------===//
#include "dynoc/Passes/Passes.h"

#include "mlir/Transforms/Passes.h"

void dynoc::registerPasses() { mlir::registerTransformsPasses(); }
