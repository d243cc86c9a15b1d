// dynoc-decompose rewrites the autograd engine's backward kernels
// (lib/passes/BackwardDecompositions.cpp) into elementwise core ops.

func.func @threshold_backward(%g: tensor<4x8xf32>, %x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = aten.threshold_backward %g, %x {threshold = 0 : i64} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

func.func @sigmoid_backward(%g: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %0 = aten.sigmoid_backward %g, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

func.func @tanh_backward(%g: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %0 = aten.tanh_backward %g, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// The mean's 2/N: N = 32 elements.
func.func @mse_loss_backward_mean(%g: tensor<f32>, %x: tensor<32x1xf32>, %t: tensor<32x1xf32>) -> tensor<32x1xf32> {
  %0 = aten.mse_loss_backward %g, %x, %t {reduction = 1 : i64} : (tensor<f32>, tensor<32x1xf32>, tensor<32x1xf32>) -> tensor<32x1xf32>
  return %0 : tensor<32x1xf32>
}

// A mean over a dynamic shape has no constant N: left alone.
func.func @mse_loss_backward_dynamic(%g: tensor<f32>, %x: tensor<?x1xf32>, %t: tensor<?x1xf32>) -> tensor<?x1xf32> {
  %0 = aten.mse_loss_backward %g, %x, %t {reduction = 1 : i64} : (tensor<f32>, tensor<?x1xf32>, tensor<?x1xf32>) -> tensor<?x1xf32>
  return %0 : tensor<?x1xf32>
}

func.func @softmax_backward(%g: tensor<4x5xf32>, %y: tensor<4x5xf32>) -> tensor<4x5xf32> {
  %0 = aten._softmax_backward_data %g, %y {dim = -1 : i64, input_dtype = f32} : (tensor<4x5xf32>, tensor<4x5xf32>) -> tensor<4x5xf32>
  return %0 : tensor<4x5xf32>
}

// The mean over the rows whose target is not ignore_index: -g / total_weight
// where the class is the target.
func.func @nll_loss_backward(%g: tensor<f32>, %x: tensor<8x4xf32>, %t: tensor<8xi64>, %w: tensor<f32>) -> tensor<8x4xf32> {
  %0 = "aten.nll_loss_backward"(%g, %x, %t, %w) {reduction = 1 : i64, ignore_index = -100 : i64, operand_segment_sizes = array<i32: 1, 1, 1, 0, 1>} : (tensor<f32>, tensor<8x4xf32>, tensor<8xi64>, tensor<f32>) -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// The layer norm's input gradient: rstd * (g - mean(g) - x^ * mean(g * x^));
// the weight's and bias's sum over the leading dims.
func.func @layer_norm_backward(%dy: tensor<2x3x8xf32>, %x: tensor<2x3x8xf32>, %mean: tensor<2x3x1xf32>, %rstd: tensor<2x3x1xf32>, %w: tensor<8xf32>, %b: tensor<8xf32>) -> (tensor<2x3x8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %0:3 = "aten.native_layer_norm_backward"(%dy, %x, %mean, %rstd, %w, %b) {normalized_shape = array<i64: 8>, output_mask = array<i1: true, true, true>, operand_segment_sizes = array<i32: 1, 1, 1, 1, 1, 1>} : (tensor<2x3x8xf32>, tensor<2x3x8xf32>, tensor<2x3x1xf32>, tensor<2x3x1xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<2x3x8xf32>, tensor<8xf32>, tensor<8xf32>)
  return %0#0, %0#1, %0#2 : tensor<2x3x8xf32>, tensor<8xf32>, tensor<8xf32>
}

// The embedding's gradient: a one-hot of the indices (padding rows left
// out), transposed, times the output gradient.
func.func @embedding_dense_backward(%g: tensor<2x5x4xf32>, %i: tensor<2x5xi64>) -> tensor<11x4xf32> {
  %0 = aten.embedding_dense_backward %g, %i {num_weights = 11 : i64, padding_idx = 0 : i64, scale_grad_by_freq = false} : (tensor<2x5x4xf32>, tensor<2x5xi64>) -> tensor<11x4xf32>
  return %0 : tensor<11x4xf32>
}

// slice_backward and select_backward (a negative index) pad with zeros.
func.func @slice_select_backward(%g: tensor<2x3x4xf32>, %h: tensor<2x4xf32>) -> (tensor<2x5x4xf32>, tensor<2x5x4xf32>) {
  %0 = aten.slice_backward %g {input_sizes = array<i64: 2, 5, 4>, dim = 1 : i64, start = 1 : i64, end = 4 : i64, step = 1 : i64} : (tensor<2x3x4xf32>) -> tensor<2x5x4xf32>
  %1 = aten.select_backward %h {input_sizes = array<i64: 2, 5, 4>, dim = 1 : i64, index = -1 : i64} : (tensor<2x4xf32>) -> tensor<2x5x4xf32>
  return %0, %1 : tensor<2x5x4xf32>, tensor<2x5x4xf32>
}
