// dynoc-fold-batchnorm: eval batch norm after a convolution becomes the
// convolution's weight and bias; other batch norms stay.

func.func @with_bias(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>, %g: tensor<4xf32>, %beta: tensor<4xf32>, %m: tensor<4xf32>, %v: tensor<4xf32>) -> tensor<1x4x8x8xf32> {
  %0 = "aten.convolution"(%x, %w, %b) {stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, transposed = false, output_padding = array<i64: 0, 0>, groups = 1 : i64} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
  %1, %2, %3 = "aten.native_batch_norm"(%0, %g, %beta, %m, %v) {training = false, momentum = 0.1 : f64, eps = 1.0e-05 : f64, operand_segment_sizes = array<i32: 1, 1, 1, 1, 1>} : (tensor<1x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<1x4x8x8xf32>, tensor<0xf32>, tensor<0xf32>)
  return %1 : tensor<1x4x8x8xf32>
}

// Without a convolution bias: b' = beta - mean * s.
func.func @without_bias(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %g: tensor<4xf32>, %beta: tensor<4xf32>, %m: tensor<4xf32>, %v: tensor<4xf32>) -> tensor<1x4x6x6xf32> {
  %0 = "aten.convolution"(%x, %w) {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, transposed = false, output_padding = array<i64: 0, 0>, groups = 1 : i64} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  %1, %2, %3 = "aten._native_batch_norm_legit_no_training"(%0, %g, %beta, %m, %v) {momentum = 0.1 : f64, eps = 1.0e-05 : f64, operand_segment_sizes = array<i32: 1, 1, 1, 1, 1>} : (tensor<1x4x6x6xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<1x4x6x6xf32>, tensor<0xf32>, tensor<0xf32>)
  return %1 : tensor<1x4x6x6xf32>
}

// The convolution's result is used elsewhere too: no fold.
func.func @conv_used_twice(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %g: tensor<4xf32>, %beta: tensor<4xf32>, %m: tensor<4xf32>, %v: tensor<4xf32>) -> (tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>) {
  %0 = "aten.convolution"(%x, %w) {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, transposed = false, output_padding = array<i64: 0, 0>, groups = 1 : i64} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  %1, %2, %3 = "aten.native_batch_norm"(%0, %g, %beta, %m, %v) {training = false, momentum = 0.1 : f64, eps = 1.0e-05 : f64, operand_segment_sizes = array<i32: 1, 1, 1, 1, 1>} : (tensor<1x4x6x6xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<1x4x6x6xf32>, tensor<0xf32>, tensor<0xf32>)
  return %0, %1 : tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>
}

// Training-mode batch norm computes its own statistics: no fold.
func.func @training(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %g: tensor<4xf32>, %beta: tensor<4xf32>, %m: tensor<4xf32>, %v: tensor<4xf32>) -> tensor<1x4x6x6xf32> {
  %0 = "aten.convolution"(%x, %w) {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, transposed = false, output_padding = array<i64: 0, 0>, groups = 1 : i64} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  %1, %2, %3 = "aten.native_batch_norm"(%0, %g, %beta, %m, %v) {training = true, momentum = 0.1 : f64, eps = 1.0e-05 : f64, operand_segment_sizes = array<i32: 1, 1, 1, 1, 1>} : (tensor<1x4x6x6xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<1x4x6x6xf32>, tensor<4xf32>, tensor<4xf32>)
  return %1 : tensor<1x4x6x6xf32>
}
