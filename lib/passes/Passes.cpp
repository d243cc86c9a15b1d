//===- Passes.cpp - pass registration -------------------------------------===//
#include "dynoc/Passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Transforms/Passes.h"

namespace {
#define GEN_PASS_REGISTRATION
#include "dynoc/Passes/Passes.h.inc"
} // namespace

void dynoc::registerPasses() {
  mlir::registerTransformsPasses();
  registerCanonicalize();
  registerDecompose();
  registerFoldBatchNorm();
  registerFusion();
  registerInferShapes();
  registerPrecomputeWeights();
  registerWidenReducedPrecision();
}
