// An op or dtype the CUDA target lacks is an error at its location, never a
// wrong result.
// RUN: not dynoc build --target=cuda %s -o %t.so 2>&1 | FileCheck %s

func.func @graph_0(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %a: tensor<4x5xf64>, %b: tensor<5x2xf64>) -> (tensor<1x4x6x6xf32>, tensor<4x2xf64>) attributes {dynoc.inputs = [{kind = "user", name = "L['x']"}, {kind = "user", name = "L['w']"}, {kind = "user", name = "L['a']"}, {kind = "user", name = "L['b']"}]} {
  // CHECK: build-cuda-unsupported.mlir:[[@LINE+1]]:8: error: dynoc build (cuda): op 'aten.convolution' is not supported by the CUDA backend yet
  %0 = "aten.convolution"(%x, %w) {stride = array<i64: 1>, padding = array<i64: 0>, dilation = array<i64: 1>, transposed = false, output_padding = array<i64: 0>, groups = 1 : i64, operand_segment_sizes = array<i32: 1, 1, 0>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  // CHECK: build-cuda-unsupported.mlir:[[@LINE+1]]:8: error: dynoc build (cuda): 'aten.mm' uses dtype 'f64', which the CUDA backend does not run this op on yet
  %1 = "aten.mm"(%a, %b) : (tensor<4x5xf64>, tensor<5x2xf64>) -> tensor<4x2xf64>
  return %0, %1 : tensor<1x4x6x6xf32>, tensor<4x2xf64>
}
