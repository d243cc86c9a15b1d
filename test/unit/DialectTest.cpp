//===- DialectTest.cpp - the generated aten dialect -----------------------===//
#include "dynoc/IR/AtenDialect.h"
#include "dynoc/IR/GraphIO.h"

#include "mlir/IR/MLIRContext.h"

#include <catch2/catch.hpp>

TEST_CASE("the aten dialect has at least 400 ops, one per ATen overload") {
  mlir::DialectRegistry registry;
  dynoc::registerGraphDialects(registry);
  mlir::MLIRContext context(registry);
  context.loadAllAvailableDialects();
  size_t count = 0;
  bool hasAddTensor = false, hasConvolution = false, hasLinear = false;
  for (mlir::RegisteredOperationName name : context.getRegisteredOperations()) {
    if (name.getDialectNamespace() != "aten")
      continue;
    ++count;
    hasAddTensor |= name.getStringRef() == "aten.add.Tensor";
    hasConvolution |= name.getStringRef() == "aten.convolution";
    hasLinear |= name.getStringRef() == "aten.linear";
  }
  CHECK(count >= 400);
  CHECK(hasAddTensor);
  CHECK(hasConvolution);
  CHECK(hasLinear);
}
