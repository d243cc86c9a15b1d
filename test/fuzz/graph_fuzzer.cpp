//===- graph_fuzzer.cpp - graph file reader, verifier, shape inference ----===//
//
// What `dynoc opt FILE --pass=dynoc-infer-shapes` runs: parse, verify
// (dialect verifiers, signature and guard attributes), infer shapes and
// dtypes, verify again.
//
//===----------------------------------------------------------------------===//
#include "GraphFuzzContext.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/PassManager.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  dynoc::fuzz::withParsedGraph(
      data, size, [](mlir::ModuleOp module, unsigned &errors) {
        mlir::PassManager pm(module.getContext());
        pm.addNestedPass<mlir::func::FuncOp>(dynoc::createInferShapesPass());
        if (mlir::failed(pm.run(module)) && errors == 0)
          __builtin_trap(); // a failed pass must say why
      });
  return 0;
}
