//===- GraphIO.h - reading graph files --------------------------*- C++ -*-===//
#ifndef DYNOC_IR_GRAPHIO_H
#define DYNOC_IR_GRAPHIO_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/SourceMgr.h"

namespace dynoc {
/// Adds every dialect a graph file may use (aten, dynoc, func, arith).
void registerGraphDialects(mlir::DialectRegistry &registry);

/// Parses and verifies the graph file at `path`. Diagnostics, with
/// file:line:col, go to the handlers registered on `context`; `sourceMgr` keeps
/// the buffer alive for them. Returns null on any error.
mlir::OwningOpRef<mlir::ModuleOp> parseGraphFile(llvm::StringRef path,
                                                 mlir::MLIRContext &context,
                                                 llvm::SourceMgr &sourceMgr);

/// The same, for the main buffer `sourceMgr` already holds. Beyond MLIR's
/// parser and verifier, it refuses nesting deeper than 256 levels (which
/// would exhaust the recursive parser's stack) and strings that are not
/// UTF-8, each with a located error.
mlir::OwningOpRef<mlir::ModuleOp> parseGraphBuffer(llvm::SourceMgr &sourceMgr,
                                                   mlir::MLIRContext &context);
} // namespace dynoc

#endif // DYNOC_IR_GRAPHIO_H
