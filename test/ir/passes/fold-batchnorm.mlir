// dynoc-fold-batchnorm: eval batch norm after a convolution becomes the
// convolution's weight and bias; other batch norms stay.
// RUN: dynoc opt %s --pass=dynoc-fold-batchnorm | FileCheck %s

// CHECK-LABEL: func.func @with_bias
// CHECK-SAME: (%[[X:.*]]: tensor<1x3x8x8xf32>, %[[W:.*]]: tensor<4x3x3x3xf32>, %[[B:.*]]: tensor<4xf32>, %[[G:.*]]: tensor<4xf32>, %[[BETA:.*]]: tensor<4xf32>, %[[M:.*]]: tensor<4xf32>, %[[V:.*]]: tensor<4xf32>)
// CHECK: %[[VE:.*]] = aten.add.Scalar %[[V]] {other = 1.000000e-05 : f64}
// CHECK: %[[INV:.*]] = aten.rsqrt %[[VE]]
// CHECK: %[[S:.*]] = aten.mul.Tensor %[[G]], %[[INV]]
// CHECK: %[[S4:.*]] = aten.view %[[S]] {size = array<i64: 4, 1, 1, 1>}
// CHECK: %[[W2:.*]] = aten.mul.Tensor %[[W]], %[[S4]]
// CHECK: %[[C:.*]] = aten.sub.Tensor %[[B]], %[[M]]
// CHECK: %[[CS:.*]] = aten.mul.Tensor %[[C]], %[[S]]
// CHECK: %[[B2:.*]] = aten.add.Tensor %[[CS]], %[[BETA]]
// CHECK: %[[Y:.*]] = "aten.convolution"(%[[X]], %[[W2]], %[[B2]])
// CHECK-SAME: padding = array<i64: 1, 1>
// CHECK-NOT: aten.native_batch_norm
// CHECK: return %[[Y]]
func.func @with_bias(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>, %g: tensor<4xf32>, %beta: tensor<4xf32>, %m: tensor<4xf32>, %v: tensor<4xf32>) -> tensor<1x4x8x8xf32> {
  %0 = "aten.convolution"(%x, %w, %b) {stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, transposed = false, output_padding = array<i64: 0, 0>, groups = 1 : i64} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
  %1, %2, %3 = "aten.native_batch_norm"(%0, %g, %beta, %m, %v) {training = false, momentum = 0.1 : f64, eps = 1.0e-05 : f64, operand_segment_sizes = array<i32: 1, 1, 1, 1, 1>} : (tensor<1x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<1x4x8x8xf32>, tensor<0xf32>, tensor<0xf32>)
  return %1 : tensor<1x4x8x8xf32>
}

// Without a convolution bias: b' = beta - mean * s.
// CHECK-LABEL: func.func @without_bias
// CHECK: %[[S:.*]] = aten.mul.Tensor %arg2, %{{.*}}
// CHECK: %[[MS:.*]] = aten.mul.Tensor %arg4, %[[S]]
// CHECK: %[[B2:.*]] = aten.sub.Tensor %arg3, %[[MS]]
// CHECK: "aten.convolution"(%arg0, %{{.*}}, %[[B2]])
// CHECK-NOT: aten._native_batch_norm_legit_no_training
func.func @without_bias(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %g: tensor<4xf32>, %beta: tensor<4xf32>, %m: tensor<4xf32>, %v: tensor<4xf32>) -> tensor<1x4x6x6xf32> {
  %0 = "aten.convolution"(%x, %w) {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, transposed = false, output_padding = array<i64: 0, 0>, groups = 1 : i64} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  %1, %2, %3 = "aten._native_batch_norm_legit_no_training"(%0, %g, %beta, %m, %v) {momentum = 0.1 : f64, eps = 1.0e-05 : f64, operand_segment_sizes = array<i32: 1, 1, 1, 1, 1>} : (tensor<1x4x6x6xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<1x4x6x6xf32>, tensor<0xf32>, tensor<0xf32>)
  return %1 : tensor<1x4x6x6xf32>
}

// The convolution's result is used elsewhere too: no fold.
// CHECK-LABEL: func.func @conv_used_twice
// CHECK: "aten.convolution"(%arg0, %arg1)
// CHECK: aten.native_batch_norm
func.func @conv_used_twice(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %g: tensor<4xf32>, %beta: tensor<4xf32>, %m: tensor<4xf32>, %v: tensor<4xf32>) -> (tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>) {
  %0 = "aten.convolution"(%x, %w) {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, transposed = false, output_padding = array<i64: 0, 0>, groups = 1 : i64} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  %1, %2, %3 = "aten.native_batch_norm"(%0, %g, %beta, %m, %v) {training = false, momentum = 0.1 : f64, eps = 1.0e-05 : f64, operand_segment_sizes = array<i32: 1, 1, 1, 1, 1>} : (tensor<1x4x6x6xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<1x4x6x6xf32>, tensor<0xf32>, tensor<0xf32>)
  return %0, %1 : tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>
}

// Training-mode batch norm computes its own statistics: no fold.
// CHECK-LABEL: func.func @training
// CHECK: aten.native_batch_norm
// CHECK-SAME: training = true
func.func @training(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %g: tensor<4xf32>, %beta: tensor<4xf32>, %m: tensor<4xf32>, %v: tensor<4xf32>) -> tensor<1x4x6x6xf32> {
  %0 = "aten.convolution"(%x, %w) {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, transposed = false, output_padding = array<i64: 0, 0>, groups = 1 : i64} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  %1, %2, %3 = "aten.native_batch_norm"(%0, %g, %beta, %m, %v) {training = true, momentum = 0.1 : f64, eps = 1.0e-05 : f64, operand_segment_sizes = array<i32: 1, 1, 1, 1, 1>} : (tensor<1x4x6x6xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<1x4x6x6xf32>, tensor<4xf32>, tensor<4xf32>)
  return %1 : tensor<1x4x6x6xf32>
}

// A bf16 convolution widened to f32 for the norm (dynoc-widen-reduced-precision's
// conversion, with the statistics widened after the convolution): the new
// weight is computed in f32 from the widened weight and rounded to bf16 once;
// the folded convolution, placed at the norm, is bf16 and its result is
// widened for the norm's users.
// CHECK-LABEL: func.func @bf16_widened
// CHECK: %[[WF:.*]] = aten._to_copy %arg1 {dtype = f32} : (tensor<4x3x3x3xbf16>) -> tensor<4x3x3x3xf32>
// CHECK: %[[W2F:.*]] = aten.mul.Tensor %[[WF]], %{{.*}} : (tensor<4x3x3x3xf32>, tensor<4x1x1x1xf32>) -> tensor<4x3x3x3xf32>
// CHECK: %[[W2:.*]] = aten._to_copy %[[W2F]] {dtype = bf16} : (tensor<4x3x3x3xf32>) -> tensor<4x3x3x3xbf16>
// CHECK: %[[B2:.*]] = aten._to_copy %{{.*}} {dtype = bf16} : (tensor<4xf32>) -> tensor<4xbf16>
// CHECK: %[[Y:.*]] = "aten.convolution"(%arg0, %[[W2]], %[[B2]]) {{.*}} -> tensor<1x4x8x8xbf16>
// CHECK: %[[YF:.*]] = aten._to_copy %[[Y]] {dtype = f32}
// CHECK-NOT: aten.native_batch_norm
// CHECK: aten._to_copy %[[YF]] {dtype = bf16}
func.func @bf16_widened(%x: tensor<1x3x8x8xbf16>, %w: tensor<4x3x3x3xbf16>, %g: tensor<4xbf16>, %beta: tensor<4xbf16>, %m: tensor<4xbf16>, %v: tensor<4xbf16>) -> tensor<1x4x8x8xbf16> {
  %0 = "aten.convolution"(%x, %w) {stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, transposed = false, output_padding = array<i64: 0, 0>, groups = 1 : i64} : (tensor<1x3x8x8xbf16>, tensor<4x3x3x3xbf16>) -> tensor<1x4x8x8xbf16>
  %1 = aten._to_copy %0 {dtype = f32} : (tensor<1x4x8x8xbf16>) -> tensor<1x4x8x8xf32>
  %g32 = aten._to_copy %g {dtype = f32} : (tensor<4xbf16>) -> tensor<4xf32>
  %b32 = aten._to_copy %beta {dtype = f32} : (tensor<4xbf16>) -> tensor<4xf32>
  %m32 = aten._to_copy %m {dtype = f32} : (tensor<4xbf16>) -> tensor<4xf32>
  %v32 = aten._to_copy %v {dtype = f32} : (tensor<4xbf16>) -> tensor<4xf32>
  %2, %3, %4 = "aten.native_batch_norm"(%1, %g32, %b32, %m32, %v32) {training = false, momentum = 0.1 : f64, eps = 1.0e-05 : f64, operand_segment_sizes = array<i32: 1, 1, 1, 1, 1>} : (tensor<1x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<1x4x8x8xf32>, tensor<0xf32>, tensor<0xf32>)
  %5 = aten._to_copy %2 {dtype = bf16} : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xbf16>
  return %5 : tensor<1x4x8x8xbf16>
}
