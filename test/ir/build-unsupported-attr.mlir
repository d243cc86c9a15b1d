// An attribute value the CPU backend does not handle is an error naming it, at
// the op's location.
// RUN: not dynoc build %s -o %t.so 2>&1 | FileCheck %s

func.func @graph_0(%x: tensor<1x3x8x8xf32>, %w: tensor<3x3x3x3xf32>) -> tensor<1x3x10x10xf32> attributes {dynoc.inputs = [{kind = "user", name = "L['x']"}, {kind = "user", name = "L['w']"}]} {
  // CHECK: build-unsupported-attr.mlir:[[@LINE+1]]:8: error: dynoc build (cpu): transposed convolution is not supported yet
  %0 = "aten.convolution"(%x, %w) {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, transposed = true, output_padding = array<i64: 0, 0>, groups = 1 : i64} : (tensor<1x3x8x8xf32>, tensor<3x3x3x3xf32>) -> tensor<1x3x10x10xf32>
  return %0 : tensor<1x3x10x10xf32>
}
