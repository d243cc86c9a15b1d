//===- AtenDialect.cpp - the aten dialect ---------------------------------===//
#include "dynoc/IR/AtenDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace dynoc::aten;

#include "dynoc/IR/AtenDialect.cpp.inc"

void AtenDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dynoc/IR/AtenOps.cpp.inc"
      >();
}

#define GET_OP_CLASSES
#include "dynoc/IR/AtenOps.cpp.inc"
