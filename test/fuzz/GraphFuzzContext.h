//===- GraphFuzzContext.h - one MLIRContext for many inputs -----*- C++ -*-===//
//
// Making an MLIRContext with the aten dialect's ~430 ops registered costs
// more than parsing a small graph, so the graph targets share one; it is
// remade every few hundred inputs so the attributes and types each input
// interns do not accumulate without bound.
//
//===----------------------------------------------------------------------===//
#ifndef DYNOC_TEST_FUZZ_GRAPHFUZZCONTEXT_H
#define DYNOC_TEST_FUZZ_GRAPHFUZZCONTEXT_H

#include "dynoc/IR/GraphIO.h"
#include "dynoc/Passes/Passes.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cstdint>
#include <memory>

namespace dynoc::fuzz {

/// Parses and verifies `data` as a graph file, as `dynoc opt` and `dynoc
/// build` read one; diagnostics are counted, not printed. `use` gets the
/// module when it parsed.
template <typename Fn>
void withParsedGraph(const uint8_t *data, size_t size, Fn use) {
  static std::unique_ptr<mlir::MLIRContext> context;
  static unsigned uses = 0;
  if (!context || ++uses % 256 == 0) {
    static bool registered = (registerPasses(), true);
    (void)registered;
    mlir::DialectRegistry registry;
    registerGraphDialects(registry);
    context = std::make_unique<mlir::MLIRContext>(registry);
    context->loadAllAvailableDialects();
    context->printOpOnDiagnostic(false);
    // Multithreading would only add thread start-up to each input.
    context->disableMultithreading();
  }
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(
          llvm::StringRef(reinterpret_cast<const char *>(data), size),
          "fuzz.mlir"),
      llvm::SMLoc());
  unsigned errors = 0;
  mlir::ScopedDiagnosticHandler handler(
      context.get(), [&](mlir::Diagnostic &d) {
        errors += d.getSeverity() == mlir::DiagnosticSeverity::Error;
        return mlir::success();
      });
  mlir::OwningOpRef<mlir::ModuleOp> module =
      parseGraphBuffer(sourceMgr, *context);
  if (!module) {
    if (errors == 0)
      __builtin_trap(); // a refused graph file must say why
    return;
  }
  use(*module, errors);
}

} // namespace dynoc::fuzz

#endif // DYNOC_TEST_FUZZ_GRAPHFUZZCONTEXT_H
