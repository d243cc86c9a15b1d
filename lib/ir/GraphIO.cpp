//===- GraphIO.cpp - reading graph files ----------------------------------===//
#include "dynoc/IR/GraphIO.h"
#include "dynoc/IR/AtenDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/MemoryBuffer.h"

using namespace mlir;

void dynoc::registerGraphDialects(DialectRegistry &registry) {
  registry.insert<dynoc::aten::AtenDialect, dynoc::DynocDialect,
                  func::FuncDialect, arith::ArithDialect>();
}

OwningOpRef<ModuleOp> dynoc::parseGraphFile(llvm::StringRef path,
                                            MLIRContext &context,
                                            llvm::SourceMgr &sourceMgr) {
  auto buffer = llvm::MemoryBuffer::getFileOrSTDIN(path, /*IsText=*/true);
  if (std::error_code ec = buffer.getError()) {
    emitError(UnknownLoc::get(&context))
        << "cannot read '" << path << "': " << ec.message();
    return nullptr;
  }
  sourceMgr.AddNewSourceBuffer(std::move(*buffer), llvm::SMLoc());
  // parseSourceFile verifies the module after parsing.
  return parseSourceFile<ModuleOp>(sourceMgr, &context);
}
