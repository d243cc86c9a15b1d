// A training step's loss and backward kernels on the CUDA target: max
// pooling writes the indices its backward reads, a convolution's gradients
// take no column scratch (cuDNN brings its workspace: the CPU's im2col
// GEMMs do), the losses and Adam's bias corrections (a number to a tensor's
// power, a reciprocal) are the library's calls and a fused loop.
// RUN: dynoc build --target=cuda %s -o %t.cu --emit=cu
// RUN: FileCheck %s < %t.cu

func.func @graph_0(%x: tensor<2x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %dy: tensor<2x4x4x4xf32>, %labels: tensor<2xi64>, %logp: tensor<2x10xf32>, %a: tensor<2x1xf32>, %b: tensor<2x1xf32>, %step: tensor<f32>) -> (tensor<2x4x4x4xf32>, tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>, tensor<f32>, tensor<f32>, tensor<f32>) attributes {dynoc.inputs = [{kind = "user", name = "L['x']"}, {kind = "parameter", name = "w"}, {kind = "user", name = "L['dy']"}, {kind = "user", name = "L['labels']"}, {kind = "user", name = "L['logp']"}, {kind = "user", name = "L['a']"}, {kind = "user", name = "L['b']"}, {kind = "user", name = "L['step']"}]} {
  %c = "aten.convolution"(%x, %w) {stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, transposed = false, output_padding = array<i64: 0, 0>, groups = 1 : i64} : (tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<2x4x8x8xf32>
  %p, %idx = "aten.max_pool2d_with_indices"(%c) {kernel_size = array<i64: 2, 2>, stride = array<i64: 2, 2>} : (tensor<2x4x8x8xf32>) -> (tensor<2x4x4x4xf32>, tensor<2x4x4x4xi64>)
  %dc = "aten.max_pool2d_with_indices_backward"(%dy, %c, %idx) {kernel_size = array<i64: 2, 2>, stride = array<i64: 2, 2>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, ceil_mode = false} : (tensor<2x4x4x4xf32>, tensor<2x4x8x8xf32>, tensor<2x4x4x4xi64>) -> tensor<2x4x8x8xf32>
  %dx, %dw, %db = "aten.convolution_backward"(%dc, %x, %w) {bias_sizes = array<i64: 4>, stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, transposed = false, output_padding = array<i64: 0, 0>, groups = 1 : i64, output_mask = array<i1: true, true, true>} : (tensor<2x4x8x8xf32>, tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>) -> (tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>)
  %nll, %total = "aten.nll_loss_forward"(%logp, %labels) {reduction = 1 : i64, ignore_index = -100 : i64} : (tensor<2x10xf32>, tensor<2xi64>) -> (tensor<f32>, tensor<f32>)
  %mse = "aten.mse_loss"(%a, %b) : (tensor<2x1xf32>, tensor<2x1xf32>) -> tensor<f32>
  %pw = "aten.pow.Scalar"(%step) {self = 0.9 : f64} : (tensor<f32>) -> tensor<f32>
  %r = "aten.reciprocal"(%pw) : (tensor<f32>) -> tensor<f32>
  return %p, %dx, %dw, %db, %nll, %mse, %r : tensor<2x4x4x4xf32>, tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>, tensor<f32>, tensor<f32>, tensor<f32>
}

// CHECK: const float t0 = std::pow(9.000000000e-01f, x0);
// CHECK-NEXT: const float t1 = 1.f / t0;
// CHECK: dynoc_k::max_pool2d_indices({{[a-z0-9]+}}, [[IDX:[a-z0-9]+]], {{[a-z0-9]+}}, 8, 8, 8, 4, 4, 2, 2, 2, 2, 0, 0, 1, 1);
// CHECK: dynoc_k::max_pool2d_backward([[DC:[a-z0-9]+]], a2, [[IDX]], 8, 8, 8, 4, 4);
// CHECK: dynoc_k::conv2d_backward_input({{[a-z0-9]+}}, [[DC]], a1, 2, 3, 8, 8, 4, 3, 3, 8, 8, 1, 1, 1, 1, 1, 1, 1, nullptr)) return rc;
// CHECK: dynoc_k::conv2d_backward_weight({{[a-z0-9]+}}, [[DC]], a0, 2, 3, 8, 8, 4, 3, 3, 8, 8, 1, 1, 1, 1, 1, 1, 1, nullptr)) return rc;
// CHECK: dynoc_k::conv_backward_bias({{[a-z0-9]+}}, [[DC]], 2, 4, 64);
// CHECK: dynoc_k::nll_loss({{[a-z0-9]+}}, static_cast<float *>(nullptr), a4, a3, static_cast<float *>(nullptr), 2, 10, 1, int64_t(-100))) return rc;
// CHECK: dynoc_k::mse_loss({{[a-z0-9]+}}, a5, a6, 2, 1);
