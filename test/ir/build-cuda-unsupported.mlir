// An op or dtype the CUDA target lacks is an error at its location, never a
// wrong result.
// RUN: not dynoc build --target=cuda %s -o %t.so 2>&1 | FileCheck %s

func.func @graph_0(%a: tensor<4x5xf64>, %b: tensor<5x2xf64>, %c: tensor<4x5xf32>, %u: tensor<8x3xui8>) -> (tensor<4x2xf64>, tensor<4xi64>, tensor<3x8xui8>) attributes {dynoc.inputs = [{kind = "user", name = "L['a']"}, {kind = "user", name = "L['b']"}, {kind = "user", name = "L['c']"}, {kind = "user", name = "L['u']"}]} {
  // CHECK: build-cuda-unsupported.mlir:[[@LINE+1]]:8: error: dynoc build (cuda): 'aten.mm' uses dtype 'f64', which the CUDA backend does not run this op on yet
  %1 = "aten.mm"(%a, %b) : (tensor<4x5xf64>, tensor<5x2xf64>) -> tensor<4x2xf64>
  // CHECK: build-cuda-unsupported.mlir:[[@LINE+1]]:8: error: dynoc build (cuda): op 'aten.argmax' is not supported by the CUDA backend yet
  %2 = "aten.argmax"(%c) {dim = 1 : i64} : (tensor<4x5xf32>) -> tensor<4xi64>
  // The library's typed kernels (a transpose) have no 8-bit instances.
  // CHECK: build-cuda-unsupported.mlir:[[@LINE+1]]:8: error: dynoc build (cuda): 'aten.permute' uses dtype 'ui8', which the CUDA backend does not run this op on yet
  %3 = "aten.permute"(%u) {dims = array<i64: 1, 0>} : (tensor<8x3xui8>) -> tensor<3x8xui8>
  return %1, %2, %3 : tensor<4x2xf64>, tensor<4xi64>, tensor<3x8xui8>
}
