// RUN: not dynoc build %s -o %t.so 2>&1 | FileCheck %s

// f64 runs the elementwise ops and GEMMs but not convolution: the error
// names the op, its dtype and its place.
func.func @graph_0(%x: tensor<1x2x5x5xf64>, %w: tensor<3x2x3x3xf64>) -> tensor<1x3x3x3xf64> attributes {dynoc.inputs = [{kind = "user", name = "L['x']"}, {kind = "user", name = "L['w']"}]} {
  // CHECK: build-unsupported-op-dtype.mlir:[[@LINE+1]]:8: error: dynoc build (cpu): 'aten.convolution' uses dtype 'f64', which the CPU backend does not run this op on yet
  %0 = "aten.convolution"(%x, %w) {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, transposed = false, output_padding = array<i64: 0, 0>, groups = 1 : i64} : (tensor<1x2x5x5xf64>, tensor<3x2x3x3xf64>) -> tensor<1x3x3x3xf64>
  return %0 : tensor<1x3x3x3xf64>
}
