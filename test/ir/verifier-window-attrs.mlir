// A window's attributes are checked when the op is verified, in ATen's words,
// before shape code divides by them (a 0 stride was a SIGFPE in dynoc build).
// RUN: dynoc opt %s --split-input-file --verify-diagnostics
// RUN: not dynoc build %s -o %t.so 2>&1 | FileCheck %s --check-prefix=BUILD
// BUILD: error: 'aten.convolution' op non-positive stride is not supported (stride[0] = 0)

func.func @stride0(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x?x?xf32> {
  // expected-error @+1 {{'aten.convolution' op non-positive stride is not supported (stride[0] = 0)}}
  %0 = "aten.convolution"(%x, %w) {stride = array<i64: 0, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, transposed = false, output_padding = array<i64: 0, 0>, groups = 1 : i64} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x?x?xf32>
  return %0 : tensor<1x4x?x?xf32>
}

// -----

func.func @dilation0(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x?x?xf32> {
  // expected-error @+1 {{dilation should be greater than zero (dilation[1] = 0)}}
  %0 = "aten.convolution"(%x, %w) {stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 0>, transposed = false, output_padding = array<i64: 0, 0>, groups = 1 : i64} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x?x?xf32>
  return %0 : tensor<1x4x?x?xf32>
}

// -----

func.func @groups0(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x?x?xf32> {
  // expected-error @+1 {{non-positive groups is not supported (groups = 0)}}
  %0 = "aten.convolution"(%x, %w) {stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, transposed = false, output_padding = array<i64: 0, 0>, groups = 0 : i64} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x?x?xf32>
  return %0 : tensor<1x4x?x?xf32>
}

// -----

func.func @negative_padding(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x?x?xf32> {
  // expected-error @+1 {{negative padding is not supported (padding[0] = -2)}}
  %0 = "aten.convolution"(%x, %w) {stride = array<i64: 1, 1>, padding = array<i64: -2, 1>, dilation = array<i64: 1, 1>, transposed = false, output_padding = array<i64: 0, 0>, groups = 1 : i64} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x?x?xf32>
  return %0 : tensor<1x4x?x?xf32>
}

// -----

func.func @huge_stride(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x?x?xf32> {
  // expected-error @+1 {{stride[1] = 9223372036854775807 is out of range (at most 2147483648)}}
  %0 = "aten.convolution"(%x, %w) {stride = array<i64: 1, 9223372036854775807>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, transposed = false, output_padding = array<i64: 0, 0>, groups = 1 : i64} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x?x?xf32>
  return %0 : tensor<1x4x?x?xf32>
}

// -----

func.func @pool_kernel0(%x: tensor<1x3x8x8xf32>) -> (tensor<1x3x?x?xf32>, tensor<1x3x?x?xi64>) {
  // expected-error @+1 {{kernel size should be greater than zero (kernel_size[0] = 0)}}
  %0, %1 = "aten.max_pool2d_with_indices"(%x) {kernel_size = array<i64: 0, 2>, stride = array<i64>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, ceil_mode = false} : (tensor<1x3x8x8xf32>) -> (tensor<1x3x?x?xf32>, tensor<1x3x?x?xi64>)
  return %0, %1 : tensor<1x3x?x?xf32>, tensor<1x3x?x?xi64>
}

// -----

func.func @pool_pad(%x: tensor<1x3x8x8xf32>) -> (tensor<1x3x?x?xf32>, tensor<1x3x?x?xi64>) {
  // expected-error @+1 {{pad should be at most half of effective kernel size (padding[0] = 2, effective kernel size 3)}}
  %0, %1 = "aten.max_pool2d_with_indices"(%x) {kernel_size = array<i64: 3, 3>, stride = array<i64: 2, 2>, padding = array<i64: 2, 0>, dilation = array<i64: 1, 1>, ceil_mode = false} : (tensor<1x3x8x8xf32>) -> (tensor<1x3x?x?xf32>, tensor<1x3x?x?xi64>)
  return %0, %1 : tensor<1x3x?x?xf32>, tensor<1x3x?x?xi64>
}

// -----

// Memory strides are not a window's: as_strided's may be 0 (a broadcast).
func.func @as_strided_zero(%x: tensor<4xf32>) -> tensor<3x4xf32> {
  %0 = "aten.as_strided"(%x) {size = array<i64: 3, 4>, stride = array<i64: 0, 1>} : (tensor<4xf32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}
