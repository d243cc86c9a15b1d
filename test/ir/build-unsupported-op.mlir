// An op the CPU backend cannot compile yet is an error at its location.
// RUN: not dynoc build %s -o %t.so 2>&1 | FileCheck %s

func.func @graph_0(%x: tensor<4x8xf32>) -> tensor<4x8xf32> attributes {dynoc.inputs = [{kind = "user", name = "L['x']"}]} {
  // CHECK: build-unsupported-op.mlir:[[@LINE+1]]:8: error: dynoc build (cpu): op 'aten.cumsum' is not supported by the CPU backend yet
  %0 = "aten.cumsum"(%x) {dim = 1 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}
