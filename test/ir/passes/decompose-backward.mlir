// dynoc-decompose rewrites the autograd engine's backward kernels
// (lib/passes/BackwardDecompositions.cpp) into elementwise core ops.
// RUN: dynoc opt %s --pass=dynoc-decompose | FileCheck %s

// CHECK-LABEL: func.func @threshold_backward
func.func @threshold_backward(%g: tensor<4x8xf32>, %x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // CHECK: %[[M:.*]] = aten.gt.Scalar %arg1 {other = 0 : i64} : (tensor<4x8xf32>) -> tensor<4x8xi1>
  // CHECK: %[[R:.*]] = aten.mul.Tensor %arg0, %[[M]] : (tensor<4x8xf32>, tensor<4x8xi1>) -> tensor<4x8xf32>
  // CHECK-NOT: threshold_backward
  // CHECK: return %[[R]]
  %0 = aten.threshold_backward %g, %x {threshold = 0 : i64} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @sigmoid_backward
func.func @sigmoid_backward(%g: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: %[[N:.*]] = aten.neg %arg1
  // CHECK: %[[O:.*]] = aten.add.Scalar %[[N]] {other = 1.000000e+00 : f64}
  // CHECK: %[[D:.*]] = aten.mul.Tensor %arg1, %[[O]]
  // CHECK: %[[R:.*]] = aten.mul.Tensor %arg0, %[[D]]
  // CHECK: return %[[R]]
  %0 = aten.sigmoid_backward %g, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// silu_backward(g, x) = g * s * (1 + x * (1 - s)), s = sigmoid(x).
// CHECK-LABEL: func.func @silu_backward
func.func @silu_backward(%g: tensor<4xf32>, %x: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: %[[S:.*]] = aten.sigmoid %arg1
  // CHECK: %[[N:.*]] = aten.neg %[[S]]
  // CHECK: %[[O:.*]] = aten.add.Scalar %[[N]] {other = 1.000000e+00 : f64}
  // CHECK: %[[XO:.*]] = aten.mul.Tensor %arg1, %[[O]]
  // CHECK: %[[I:.*]] = aten.add.Scalar %[[XO]] {other = 1.000000e+00 : f64}
  // CHECK: %[[GS:.*]] = aten.mul.Tensor %arg0, %[[S]]
  // CHECK: %[[R:.*]] = aten.mul.Tensor %[[GS]], %[[I]]
  // CHECK-NOT: silu_backward
  // CHECK: return %[[R]]
  %0 = aten.silu_backward %g, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// CHECK-LABEL: func.func @tanh_backward
func.func @tanh_backward(%g: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: %[[Y2:.*]] = aten.mul.Tensor %arg1, %arg1
  // CHECK: %[[N:.*]] = aten.neg %[[Y2]]
  // CHECK: %[[O:.*]] = aten.add.Scalar %[[N]] {other = 1.000000e+00 : f64}
  // CHECK: %[[R:.*]] = aten.mul.Tensor %arg0, %[[O]]
  // CHECK: return %[[R]]
  %0 = aten.tanh_backward %g, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// The mean's 2/N: N = 32 elements.
// CHECK-LABEL: func.func @mse_loss_backward_mean
func.func @mse_loss_backward_mean(%g: tensor<f32>, %x: tensor<32x1xf32>, %t: tensor<32x1xf32>) -> tensor<32x1xf32> {
  // CHECK: %[[D:.*]] = aten.sub.Tensor %arg1, %arg2
  // CHECK: %[[S:.*]] = aten.mul.Scalar %[[D]] {other = 6.250000e-02 : f64}
  // CHECK: %[[R:.*]] = aten.mul.Tensor %[[S]], %arg0
  // CHECK: return %[[R]]
  %0 = aten.mse_loss_backward %g, %x, %t {reduction = 1 : i64} : (tensor<f32>, tensor<32x1xf32>, tensor<32x1xf32>) -> tensor<32x1xf32>
  return %0 : tensor<32x1xf32>
}

// A mean over a dynamic shape has no constant N: left alone.
// CHECK-LABEL: func.func @mse_loss_backward_dynamic
func.func @mse_loss_backward_dynamic(%g: tensor<f32>, %x: tensor<?x1xf32>, %t: tensor<?x1xf32>) -> tensor<?x1xf32> {
  // CHECK: aten.mse_loss_backward
  %0 = aten.mse_loss_backward %g, %x, %t {reduction = 1 : i64} : (tensor<f32>, tensor<?x1xf32>, tensor<?x1xf32>) -> tensor<?x1xf32>
  return %0 : tensor<?x1xf32>
}

// CHECK-LABEL: func.func @softmax_backward
func.func @softmax_backward(%g: tensor<4x5xf32>, %y: tensor<4x5xf32>) -> tensor<4x5xf32> {
  // CHECK: %[[GY:.*]] = aten.mul.Tensor %arg0, %arg1
  // CHECK: %[[S:.*]] = aten.sum.dim_IntList %[[GY]] {dim = array<i64: 1>, keepdim = true} : (tensor<4x5xf32>) -> tensor<4x1xf32>
  // CHECK: %[[D:.*]] = aten.sub.Tensor %arg0, %[[S]]
  // CHECK: %[[R:.*]] = aten.mul.Tensor %arg1, %[[D]]
  // CHECK: return %[[R]]
  %0 = aten._softmax_backward_data %g, %y {dim = -1 : i64, input_dtype = f32} : (tensor<4x5xf32>, tensor<4x5xf32>) -> tensor<4x5xf32>
  return %0 : tensor<4x5xf32>
}

// The mean over the rows whose target is not ignore_index: -g / total_weight
// where the class is the target.
// CHECK-LABEL: func.func @nll_loss_backward
func.func @nll_loss_backward(%g: tensor<f32>, %x: tensor<8x4xf32>, %t: tensor<8xi64>, %w: tensor<f32>) -> tensor<8x4xf32> {
  // CHECK: %[[C:.*]] = aten.arange {dtype = i64, end = 4 : i64} : () -> tensor<4xi64>
  // CHECK: %[[T:.*]] = aten.unsqueeze %arg2 {dim = 1 : i64} : (tensor<8xi64>) -> tensor<8x1xi64>
  // CHECK: %[[H:.*]] = aten.eq.Tensor %[[T]], %[[C]] : (tensor<8x1xi64>, tensor<4xi64>) -> tensor<8x4xi1>
  // CHECK: %[[K:.*]] = aten.ne.Scalar %[[T]] {other = -100 : i64}
  // CHECK: %[[M:.*]] = aten.mul.Tensor %[[H]], %[[K]]
  // CHECK: %[[S:.*]] = aten.div.Tensor %arg0, %arg3
  // CHECK: %[[N:.*]] = aten.neg %[[S]]
  // CHECK: %[[R:.*]] = aten.mul.Tensor %[[M]], %[[N]] : (tensor<8x4xi1>, tensor<f32>) -> tensor<8x4xf32>
  // CHECK: return %[[R]]
  %0 = "aten.nll_loss_backward"(%g, %x, %t, %w) {reduction = 1 : i64, ignore_index = -100 : i64, operand_segment_sizes = array<i32: 1, 1, 1, 0, 1>} : (tensor<f32>, tensor<8x4xf32>, tensor<8xi64>, tensor<f32>) -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// The layer norm's input gradient: rstd * (g - mean(g) - x^ * mean(g * x^));
// the weight's and bias's sum over the leading dims.
// CHECK-LABEL: func.func @layer_norm_backward
func.func @layer_norm_backward(%dy: tensor<2x3x8xf32>, %x: tensor<2x3x8xf32>, %mean: tensor<2x3x1xf32>, %rstd: tensor<2x3x1xf32>, %w: tensor<8xf32>, %b: tensor<8xf32>) -> (tensor<2x3x8xf32>, tensor<8xf32>, tensor<8xf32>) {
  // CHECK: %[[C:.*]] = aten.sub.Tensor %arg1, %arg2
  // CHECK: %[[XH:.*]] = aten.mul.Tensor %[[C]], %arg3
  // CHECK: %[[G:.*]] = aten.mul.Tensor %arg0, %arg4
  // CHECK: aten.mean.dim %[[G]] {dim = array<i64: 2>, keepdim = true} : (tensor<2x3x8xf32>) -> tensor<2x3x1xf32>
  // CHECK: aten.sum.dim_IntList %{{.*}} {dim = array<i64: 0, 1>, keepdim = false} : (tensor<2x3x8xf32>) -> tensor<8xf32>
  // CHECK: aten.sum.dim_IntList %arg0 {dim = array<i64: 0, 1>, keepdim = false} : (tensor<2x3x8xf32>) -> tensor<8xf32>
  // CHECK-NOT: native_layer_norm_backward
  %0:3 = "aten.native_layer_norm_backward"(%dy, %x, %mean, %rstd, %w, %b) {normalized_shape = array<i64: 8>, output_mask = array<i1: true, true, true>, operand_segment_sizes = array<i32: 1, 1, 1, 1, 1, 1>} : (tensor<2x3x8xf32>, tensor<2x3x8xf32>, tensor<2x3x1xf32>, tensor<2x3x1xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<2x3x8xf32>, tensor<8xf32>, tensor<8xf32>)
  return %0#0, %0#1, %0#2 : tensor<2x3x8xf32>, tensor<8xf32>, tensor<8xf32>
}

// slice_backward and select_backward (a negative index) pad with zeros.
// CHECK-LABEL: func.func @slice_select_backward
func.func @slice_select_backward(%g: tensor<2x3x4xf32>, %h: tensor<2x4xf32>) -> (tensor<2x5x4xf32>, tensor<2x5x4xf32>) {
  // CHECK: aten.constant_pad_nd %arg0 {pad = array<i64: 0, 0, 1, 1>, value = 0.000000e+00 : f64}
  // CHECK: %[[U:.*]] = aten.unsqueeze %arg1 {dim = 1 : i64} : (tensor<2x4xf32>) -> tensor<2x1x4xf32>
  // CHECK: aten.constant_pad_nd %[[U]] {pad = array<i64: 0, 0, 4, 0>, value = 0.000000e+00 : f64}
  %0 = aten.slice_backward %g {input_sizes = array<i64: 2, 5, 4>, dim = 1 : i64, start = 1 : i64, end = 4 : i64, step = 1 : i64} : (tensor<2x3x4xf32>) -> tensor<2x5x4xf32>
  %1 = aten.select_backward %h {input_sizes = array<i64: 2, 5, 4>, dim = 1 : i64, index = -1 : i64} : (tensor<2x4xf32>) -> tensor<2x5x4xf32>
  return %0, %1 : tensor<2x5x4xf32>, tensor<2x5x4xf32>
}

// A dim the operand does not have leaves the op as it is (dynoc-infer-shapes,
// which dynoc build runs first, names the error; this pass never indexes the
// shape with it). Found by the build fuzzer.
// CHECK-LABEL: func.func @softmax_backward_bad_dim
// CHECK: aten._softmax_backward_data %{{.*}} {dim = 2 : i64
// CHECK: aten._log_softmax_backward_data %{{.*}} {dim = -3 : i64
func.func @softmax_backward_bad_dim(%g: tensor<4x5xf32>, %y: tensor<4x5xf32>) -> (tensor<4x5xf32>, tensor<4x5xf32>) {
  %0 = aten._softmax_backward_data %g, %y {dim = 2 : i64, input_dtype = f32} : (tensor<4x5xf32>, tensor<4x5xf32>) -> tensor<4x5xf32>
  %1 = aten._log_softmax_backward_data %g, %y {dim = -3 : i64, input_dtype = f32} : (tensor<4x5xf32>, tensor<4x5xf32>) -> tensor<4x5xf32>
  return %0, %1 : tensor<4x5xf32>, tensor<4x5xf32>
}

// leaky_relu_backward(g, x, 0.2) = x > 0 ? g : g * 0.2.
// CHECK-LABEL: func.func @leaky_relu_backward
func.func @leaky_relu_backward(%g: tensor<4xf32>, %x: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: %[[S:.*]] = aten.mul.Scalar %arg0 {other = 2.000000e-01 : f64}
  // CHECK: %[[M:.*]] = aten.gt.Scalar %arg1 {other = 0.000000e+00 : f64}
  // CHECK: aten.where.self %[[M]], %arg0, %[[S]]
  %0 = aten.leaky_relu_backward %g, %x {negative_slope = 2.000000e-01 : f64, self_is_result = false} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// binary_cross_entropy_backward, mean: g * (x - y) / max((1 - x) * x, 1e-12) / N.
// CHECK-LABEL: func.func @binary_cross_entropy_backward
func.func @binary_cross_entropy_backward(%g: tensor<f32>, %x: tensor<2x3xf32>, %y: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // CHECK: %[[D:.*]] = aten.sub.Tensor %arg1, %arg2
  // CHECK: %[[V:.*]] = aten.clamp_min %{{.*}} {min = 9.9999999999999998E-13 : f64}
  // CHECK: %[[N:.*]] = aten.mul.Tensor %arg0, %[[D]]
  // CHECK: %[[Q:.*]] = aten.div.Tensor %[[N]], %[[V]]
  // CHECK: aten.div.Scalar %[[Q]] {other = 6.000000e+00 : f64}
  %0 = "aten.binary_cross_entropy_backward"(%g, %x, %y) {reduction = 1 : i64, operandSegmentSizes = array<i32: 1, 1, 1, 0>} : (tensor<f32>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// hardtanh_backward(g, x, lo, hi) = x <= lo || x >= hi ? 0 : g.
// CHECK-LABEL: func.func @hardtanh_backward
func.func @hardtanh_backward(%g: tensor<4xf32>, %x: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: %[[LO:.*]] = aten.le.Scalar %arg1 {other = 0.000000e+00 : f64}
  // CHECK: %[[G:.*]] = aten.masked_fill.Scalar %arg0, %[[LO]] {value = 0.000000e+00 : f64}
  // CHECK: %[[HI:.*]] = aten.ge.Scalar %arg1 {other = 6.000000e+00 : f64}
  // CHECK: aten.masked_fill.Scalar %[[G]], %[[HI]] {value = 0.000000e+00 : f64}
  %0 = aten.hardtanh_backward %g, %x {min_val = 0.000000e+00 : f64, max_val = 6.000000e+00 : f64} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// mish_backward(g, x) = g * (t + x * sigmoid(x) * (1 - t * t)), t = tanh(log1p(exp(x))).
// CHECK-LABEL: func.func @mish_backward
func.func @mish_backward(%g: tensor<4xf32>, %x: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: %[[E:.*]] = aten.exp %arg1
  // CHECK: %[[SP:.*]] = aten.log1p %[[E]]
  // CHECK: %[[T:.*]] = aten.tanh %[[SP]]
  // CHECK: aten.sigmoid %arg1
  // CHECK: %[[D:.*]] = aten.add.Tensor %[[T]]
  // CHECK: aten.mul.Tensor %arg0, %[[D]]
  %0 = aten.mish_backward %g, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// huber_loss(x, y, 0.5), mean: d = |x - y|; d < 0.5 ? d * d / 2 : 0.5 * d - 0.125.
// CHECK-LABEL: func.func @huber_loss
func.func @huber_loss(%x: tensor<2x3xf32>, %y: tensor<2x3xf32>) -> tensor<f32> {
  // CHECK: %[[D:.*]] = aten.sub.Tensor %arg0, %arg1
  // CHECK: %[[A:.*]] = aten.abs %[[D]]
  // CHECK: %[[SQ:.*]] = aten.mul.Tensor %[[A]], %[[A]]
  // CHECK: %[[IN:.*]] = aten.mul.Scalar %[[SQ]] {other = 5.000000e-01 : f64}
  // CHECK: %[[LIN:.*]] = aten.mul.Scalar %[[A]] {other = 5.000000e-01 : f64}
  // CHECK: %[[OUT:.*]] = aten.sub.Scalar %[[LIN]] {other = 1.250000e-01 : f64}
  // CHECK: %[[M:.*]] = aten.lt.Scalar %[[A]] {other = 5.000000e-01 : f64}
  // CHECK: %[[L:.*]] = aten.where.self %[[M]], %[[IN]], %[[OUT]]
  // CHECK: aten.mean %[[L]]
  %0 = aten.huber_loss %x, %y {reduction = 1 : i64, delta = 5.000000e-01 : f64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// smooth_l1_loss_backward(g, x, y, beta = 2), sum: g * clamp((x - y) / 2, -1, 1).
// CHECK-LABEL: func.func @smooth_l1_loss_backward
func.func @smooth_l1_loss_backward(%g: tensor<f32>, %x: tensor<2x3xf32>, %y: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // CHECK: %[[D:.*]] = aten.sub.Tensor %arg1, %arg2
  // CHECK: %[[S:.*]] = aten.mul.Scalar %[[D]] {other = 5.000000e-01 : f64}
  // CHECK: %[[C:.*]] = aten.clamp %[[S]] {max = 1.000000e+00 : f64, min = -1.000000e+00 : f64}
  // CHECK: aten.mul.Tensor %arg0, %[[C]]
  %0 = aten.smooth_l1_loss_backward %g, %x, %y {reduction = 2 : i64, beta = 2.000000e+00 : f64} : (tensor<f32>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// log_sigmoid_backward(g, x, buffer) = g * (x < 0 ? 1 : z) / (1 + z), z = exp(-|x|).
// CHECK-LABEL: func.func @log_sigmoid_backward
func.func @log_sigmoid_backward(%g: tensor<4xf32>, %x: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: %[[A:.*]] = aten.abs %arg1
  // CHECK: %[[N:.*]] = aten.neg %[[A]]
  // CHECK: %[[Z:.*]] = aten.exp %[[N]]
  // CHECK: %[[M:.*]] = aten.lt.Scalar %arg1 {other = 0.000000e+00 : f64}
  // CHECK: %[[T:.*]] = aten.masked_fill.Scalar %[[Z]], %[[M]] {value = 1.000000e+00 : f64}
  // CHECK: %[[B:.*]] = aten.add.Scalar %[[Z]] {other = 1.000000e+00 : f64}
  // CHECK: %[[D:.*]] = aten.div.Tensor %[[T]], %[[B]]
  // CHECK: aten.mul.Tensor %arg0, %[[D]]
  %0 = aten.log_sigmoid_backward %g, %x, %b : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
