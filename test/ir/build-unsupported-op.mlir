// An op the CPU backend cannot compile yet is an error at its location.
// RUN: not dynoc build %s -o %t.so 2>&1 | FileCheck %s

func.func @graph_0(%x: tensor<4x8xf32>) -> tensor<4x8xf32> attributes {dynoc.inputs = [{kind = "user", name = "L['x']"}]} {
  // CHECK: build-unsupported-op.mlir:[[@LINE+1]]:8: error: dynoc build (cpu): op 'aten.erfinv' is not supported by the CPU backend yet
  %0 = "aten.erfinv"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // Every unsupported op of the graph is reported, not only the first.
  // CHECK: build-unsupported-op.mlir:[[@LINE+1]]:10: error: dynoc build (cpu): op 'aten.cummax' is not supported by the CPU backend yet
  %1:2 = "aten.cummax"(%0) {dim = 1 : i64} : (tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xi64>)
  return %1#0 : tensor<4x8xf32>
}
