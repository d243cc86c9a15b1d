//===- Passes.cpp - pass registration -------------------------------------===//
#include "dynoc/Passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/Passes.h"

namespace {
#define GEN_PASS_REGISTRATION
#include "dynoc/Passes/Passes.h.inc"
} // namespace

void dynoc::registerPasses() {
  mlir::registerTransformsPasses();
  registerBucketAllReduces();
  registerCanonicalize();
  registerDeferWaits();
  registerDecompose();
  registerFoldBatchNorm();
  registerFusion();
  registerInferShapes();
  registerPrecomputeWeights();
  registerWidenReducedPrecision();
}

mlir::LogicalResult
dynoc::applyPatternsOrReport(mlir::Operation *op,
                             mlir::RewritePatternSet &&patterns,
                             llvm::StringRef pass) {
  if (mlir::succeeded(
          mlir::applyPatternsAndFoldGreedily(op, std::move(patterns))))
    return mlir::success();
  return op->emitError() << "'" << pass
                         << "' did not settle: its rewrites kept changing "
                            "the graph (an op whose types contradict it? "
                            "dynoc-infer-shapes checks them)";
}

bool dynoc::usesMaskedResult(mlir::Operation *op, llvm::ArrayRef<bool> mask) {
  for (auto [i, r] : llvm::enumerate(op->getResults()))
    if (i < mask.size() && !mask[i] && !r.use_empty())
      return true;
  return false;
}

mlir::Value dynoc::convertElementType(mlir::OpBuilder &b, mlir::Location loc,
                                      mlir::Value v, mlir::Type element) {
  auto type = v.getType().cast<mlir::RankedTensorType>();
  mlir::OperationState state(loc, "aten._to_copy");
  state.addOperands(v);
  state.addTypes(mlir::RankedTensorType::get(type.getShape(), element,
                                             type.getEncoding()));
  state.addAttribute("dtype", mlir::TypeAttr::get(element));
  return b.create(state)->getResult(0);
}
