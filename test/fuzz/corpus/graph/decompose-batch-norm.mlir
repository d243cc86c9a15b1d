// dynoc-decompose rewrites var.correction and batch norm's training forward
// and backward (lib/passes/StatisticsDecompositions.cpp) into reductions over
// adjacent dims and elementwise ops.

// Dims (0, 2, 3) reduce as (2, 3), then 0; the sum of squares is divided by
// N - correction = 31.
func.func @var_correction(%x: tensor<8x3x2x2xf32>) -> tensor<3xf32> {
  %0 = aten.var.correction %x {dim = array<i64: 0, 2, 3>, correction = 1 : i64} : (tensor<8x3x2x2xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// The batch's mean and biased variance per channel; mean and invstd come back
// as (C).
func.func @batch_norm_training(%x: tensor<8x3x2x2xf32>, %w: tensor<3xf32>, %b: tensor<3xf32>, %rm: tensor<3xf32>, %rv: tensor<3xf32>) -> (tensor<8x3x2x2xf32>, tensor<3xf32>, tensor<3xf32>) {
  %0:3 = "aten.native_batch_norm"(%x, %w, %b, %rm, %rv) {training = true, momentum = 0.1 : f64, eps = 1.0e-05 : f64, operand_segment_sizes = array<i32: 1, 1, 1, 1, 1>} : (tensor<8x3x2x2xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<8x3x2x2xf32>, tensor<3xf32>, tensor<3xf32>)
  return %0#0, %0#1, %0#2 : tensor<8x3x2x2xf32>, tensor<3xf32>, tensor<3xf32>
}

// In eval mode the op stays (batch-norm folding and fusion take it).
func.func @batch_norm_eval(%x: tensor<8x3xf32>, %w: tensor<3xf32>, %b: tensor<3xf32>, %rm: tensor<3xf32>, %rv: tensor<3xf32>) -> tensor<8x3xf32> {
  %0:3 = "aten.native_batch_norm"(%x, %w, %b, %rm, %rv) {training = false, momentum = 0.1 : f64, eps = 1.0e-05 : f64, operand_segment_sizes = array<i32: 1, 1, 1, 1, 1>} : (tensor<8x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<8x3xf32>, tensor<0xf32>, tensor<0xf32>)
  return %0#0 : tensor<8x3xf32>
}

// dx = w * invstd * (g - mean(g) - x^ * mean(g * x^)); dw = sum(g * x^); the
// masked-out bias gradient is not computed.
func.func @batch_norm_backward(%g: tensor<8x3xf32>, %x: tensor<8x3xf32>, %w: tensor<3xf32>, %m: tensor<3xf32>, %s: tensor<3xf32>) -> (tensor<8x3xf32>, tensor<3xf32>) {
  %0:3 = "aten.native_batch_norm_backward"(%g, %x, %w, %m, %s) {train = true, eps = 1.0e-05 : f64, output_mask = array<i1: true, true, false>, operand_segment_sizes = array<i32: 1, 1, 1, 0, 0, 1, 1>} : (tensor<8x3xf32>, tensor<8x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<8x3xf32>, tensor<3xf32>, tensor<0xui8>)
  return %0#0, %0#1 : tensor<8x3xf32>, tensor<3xf32>
}
