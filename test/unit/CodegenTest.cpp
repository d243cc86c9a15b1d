//===- CodegenTest.cpp - the target-neutral code generation layer ---------===//
#include "dynoc/Codegen/Dims.h"
#include "dynoc/Codegen/ScalarExpr.h"
#include "dynoc/IR/GraphIO.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <catch2/catch.hpp>

#include <map>

using namespace dynoc::codegen;

namespace {
/// Parses one graph and returns the expression of each op (by op name) on
/// operands named a, b and computing in `ctype`.
std::map<std::string, std::string> exprsOf(const char *body,
                                           const char *ctype = "float") {
  mlir::DialectRegistry registry;
  dynoc::registerGraphDialects(registry);
  mlir::MLIRContext context(registry);
  context.loadAllAvailableDialects();
  context.getDiagEngine().registerHandler([](mlir::Diagnostic &) {});
  auto module = mlir::parseSourceString<mlir::ModuleOp>(body, &context);
  REQUIRE(module);
  std::map<std::string, std::string> out;
  module->walk([&](mlir::Operation *op) {
    if (op->getDialect()->getNamespace() != "aten")
      return;
    std::vector<std::string> args = {"a", "b"};
    args.resize(op->getNumOperands());
    mlir::FailureOr<std::string> e = elementwiseExpr(op, args, ctype);
    out[op->getName().getStringRef().str()] = mlir::failed(e) ? "<error>" : *e;
  });
  return out;
}
} // namespace

TEST_CASE("elementwise ops print one scalar expression for every target") {
  auto e = exprsOf(R"(
    func.func @g(%x: tensor<4xf32>, %y: tensor<4xf32>) -> () {
      %0 = aten.relu %x : (tensor<4xf32>) -> tensor<4xf32>
      %1 = "aten.hardtanh"(%x) {min_val = 0.0 : f64, max_val = 6.0 : f64} : (tensor<4xf32>) -> tensor<4xf32>
      %2 = "aten.add.Tensor"(%x, %y) {alpha = 2.0 : f64} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      %3 = "aten.maximum"(%x, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      %4 = "aten.gelu"(%x) {approximate = "tanh"} : (tensor<4xf32>) -> tensor<4xf32>
      %5 = "aten.mul.Scalar"(%x) {other = 0.5 : f64} : (tensor<4xf32>) -> tensor<4xf32>
      %6 = "aten.lt.Tensor"(%x, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
      %7 = "aten.embedding"(%x, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      return
    })");
  CHECK(e["aten.relu"] == "a > 0.f ? a : 0.f");
  // NaN passes through a clamp, as in ATen: both comparisons are false.
  CHECK(e["aten.hardtanh"] ==
        "(a < 0.000000000e+00f ? 0.000000000e+00f : a > 6.000000000e+00f ? "
        "6.000000000e+00f : a)");
  CHECK(e["aten.add.Tensor"] == "a + 2.000000000e+00f * b");
  CHECK(e["aten.maximum"] == "a > b || a != a ? a : b");
  CHECK(e["aten.gelu"] == "dynoc_k::gelu_tanh(a)");
  CHECK(e["aten.mul.Scalar"] == "a * 5.000000000e-01f");
  CHECK(e["aten.lt.Tensor"] == "a < b");
  CHECK(e["aten.embedding"].empty()); // not elementwise: the caller says so
}

TEST_CASE("an attribute the table cannot print is an error at the op") {
  auto e = exprsOf(R"(
    func.func @g(%x: tensor<4xf32>, %y: tensor<4xf32>) -> () {
      %0 = "aten.gelu"(%x) {approximate = "erf2"} : (tensor<4xf32>) -> tensor<4xf32>
      return
    })");
  CHECK(e["aten.gelu"] == "<error>");
}

TEST_CASE("other dtypes get literals of their own type") {
  auto e = exprsOf(R"(
    func.func @g(%x: tensor<4xf64>) -> () {
      %0 = "aten.add.Scalar"(%x) {other = 3 : i64, alpha = 2 : i64} : (tensor<4xf64>) -> tensor<4xf64>
      %1 = "aten.gelu"(%x) {approximate = "none"} : (tensor<4xf64>) -> tensor<4xf64>
      return
    })",
                   "double");
  CHECK(e["aten.add.Scalar"] == "a + 6.00000000000000000e+00");
  CHECK(e["aten.gelu"].find("std::erf(a * 0.70710678118654752440)") !=
        std::string::npos);
}

TEST_CASE("broadcast strides: 0 along broadcast dims, run-time tests where "
          "a dim is dynamic") {
  CHECK(broadcastStrideList({"3", "1"}, {"2", "3", "4"}) ==
        DimList{"0", "1", "0"});
  CHECK(broadcastStrideList({"in[0][0]", "4"}, {"in[0][0]", "4"}) ==
        DimList{"(in[0][0] == 1 ? 0 : 4)", "1"});
  CHECK(product({"2", "in[0][1]", "3"}) == "(6 * in[0][1])");
  CHECK(braceList({}) == "{0}");
}
