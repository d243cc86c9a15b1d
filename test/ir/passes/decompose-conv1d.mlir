// dynoc-decompose makes a 1-D convolution the 2-D one over a height of one
// (lib/passes/ConvolutionDecompositions.cpp): both backends build those.
// RUN: dynoc opt %s --pass=dynoc-decompose | FileCheck %s

// SqueezeBERT's grouped pointwise convolution.
// CHECK-LABEL: func.func @conv1d_grouped
func.func @conv1d_grouped(%x: tensor<2x32x12xf32>, %w: tensor<32x8x1xf32>, %b: tensor<32xf32>) -> tensor<2x32x12xf32> {
  // CHECK: %[[X:.*]] = aten.unsqueeze %arg0 {dim = 2 : i64} : (tensor<2x32x12xf32>) -> tensor<2x32x1x12xf32>
  // CHECK: %[[W:.*]] = aten.unsqueeze %arg1 {dim = 2 : i64} : (tensor<32x8x1xf32>) -> tensor<32x8x1x1xf32>
  // CHECK: %[[C:.*]] = "aten.convolution"(%[[X]], %[[W]], %arg2) {dilation = array<i64: 1, 1>, groups = 4 : i64, output_padding = array<i64: 0, 0>, padding = array<i64: 0, 0>, stride = array<i64: 1, 1>, transposed = false} : (tensor<2x32x1x12xf32>, tensor<32x8x1x1xf32>, tensor<32xf32>) -> tensor<2x32x1x12xf32>
  // CHECK: %[[R:.*]] = aten.squeeze.dim %[[C]] {dim = 2 : i64} : (tensor<2x32x1x12xf32>) -> tensor<2x32x12xf32>
  // CHECK: return %[[R]]
  %0 = "aten.convolution"(%x, %w, %b) {stride = array<i64: 1>, padding = array<i64: 0>, dilation = array<i64: 1>, transposed = false, output_padding = array<i64: 0>, groups = 4 : i64} : (tensor<2x32x12xf32>, tensor<32x8x1xf32>, tensor<32xf32>) -> tensor<2x32x12xf32>
  return %0 : tensor<2x32x12xf32>
}

// wav2vec2's feature encoder: a strided convolution without bias; the width
// keeps its stride, padding and dilation.
// CHECK-LABEL: func.func @conv1d_strided
func.func @conv1d_strided(%x: tensor<2x1x800xf32>, %w: tensor<16x1x10xf32>) -> tensor<2x16x158xf32> {
  // CHECK: "aten.convolution"(%{{.*}}, %{{.*}}) {dilation = array<i64: 1, 2>, groups = 1 : i64, output_padding = array<i64: 0, 0>, padding = array<i64: 0, 3>, stride = array<i64: 1, 5>, transposed = false} : (tensor<2x1x1x800xf32>, tensor<16x1x1x10xf32>) -> tensor<2x16x1x158xf32>
  %0 = "aten.convolution"(%x, %w) {stride = array<i64: 5>, padding = array<i64: 3>, dilation = array<i64: 2>, transposed = false, output_padding = array<i64: 0>, groups = 1 : i64} : (tensor<2x1x800xf32>, tensor<16x1x10xf32>) -> tensor<2x16x158xf32>
  return %0 : tensor<2x16x158xf32>
}

// A 2-D convolution is left as it is.
// CHECK-LABEL: func.func @conv2d_kept
func.func @conv2d_kept(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
  // CHECK-NOT: unsqueeze
  // CHECK: "aten.convolution"(%arg0, %arg1)
  %0 = "aten.convolution"(%x, %w) {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, transposed = false, output_padding = array<i64: 0, 0>, groups = 1 : i64} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return %0 : tensor<1x4x6x6xf32>
}
