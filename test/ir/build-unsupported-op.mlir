// An op the CPU backend cannot compile yet is an error at its location.
// RUN: not dynoc build %s -o %t.so 2>&1 | FileCheck %s

func.func @graph_0(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> attributes {dynoc.inputs = [{kind = "user", name = "L['x']"}, {kind = "user", name = "L['w']"}]} {
  // CHECK: build-unsupported-op.mlir:[[@LINE+1]]:8: error: dynoc build (cpu): op 'aten.convolution' is not supported by the CPU backend yet
  %0 = "aten.convolution"(%x, %w) {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, transposed = false, output_padding = array<i64: 0, 0>, groups = 1 : i64, operand_segment_sizes = array<i32: 1, 1, 0>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return %0 : tensor<1x4x6x6xf32>
}
