// With attention-backward (a target without an attention backward kernel:
// CUDA), dynoc-decompose writes the attention backward as the probabilities
// recomputed from the scores and the GEMMs of its gradient
// (lib/passes/AttentionDecompositions.cpp); without it the op stays (the
// CPU's flash kernel runs it).
// RUN: dynoc opt %s --pass="dynoc-decompose{attention-backward=true}" | FileCheck %s
// RUN: dynoc opt %s --pass=dynoc-decompose | FileCheck %s --check-prefix=KERNEL

// CHECK-LABEL: func.func @causal
// KERNEL-LABEL: func.func @causal
// KERNEL: aten._scaled_dot_product_flash_attention_for_cpu_backward
func.func @causal(%g: tensor<2x3x5x4xf32>, %q: tensor<2x3x5x4xf32>, %k: tensor<2x3x6x4xf32>, %v: tensor<2x3x6x4xf32>, %o: tensor<2x3x5x4xf32>, %lse: tensor<2x3x5xf32>) -> (tensor<2x3x5x4xf32>, tensor<2x3x6x4xf32>, tensor<2x3x6x4xf32>) {
  // scores = q k^T * scale (1/sqrt(4)), over batch x heads as one bmm
  // CHECK: %[[KT:.*]] = aten.transpose.int %arg2 {dim0 = -2 : i64, dim1 = -1 : i64} : (tensor<2x3x6x4xf32>) -> tensor<2x3x4x6xf32>
  // CHECK: aten.bmm {{.*}} : (tensor<6x5x4xf32>, tensor<6x4x6xf32>) -> tensor<6x5x6xf32>
  // CHECK: %[[S:.*]] = aten.mul.Scalar {{.*}} {other = 5.000000e-01 : f64} : (tensor<2x3x5x6xf32>)
  // causal: the columns after each row's own filled with -inf
  // CHECK: %[[OUT:.*]] = aten.gt.Tensor {{.*}} : (tensor<1x6xi64>, tensor<5x1xi64>) -> tensor<5x6xi1>
  // CHECK: %[[M:.*]] = aten.masked_fill.Scalar %[[S]], %[[OUT]] {value = 0xFFF0000000000000 : f64}
  // CHECK: %[[P:.*]] = aten._softmax %[[M]] {dim = -1 : i64, half_to_float = false}
  // the row sums of dO * O center dP
  // CHECK: %[[GO:.*]] = aten.mul.Tensor %arg0, %arg4
  // CHECK: aten.sum.dim_IntList %[[GO]] {dim = array<i64: 3>, keepdim = true} : (tensor<2x3x5x4xf32>) -> tensor<2x3x5x1xf32>
  // CHECK: %[[DS:.*]] = aten.mul.Tensor %[[P]], {{.*}} : (tensor<2x3x5x6xf32>, tensor<2x3x5x6xf32>)
  // CHECK-NOT: flash_attention_for_cpu_backward
  // CHECK: return
  %0:3 = "aten._scaled_dot_product_flash_attention_for_cpu_backward"(%g, %q, %k, %v, %o, %lse) {dropout_p = 0.0 : f64, is_causal = true, operand_segment_sizes = array<i32: 1, 1, 1, 1, 1, 1, 0>} : (tensor<2x3x5x4xf32>, tensor<2x3x5x4xf32>, tensor<2x3x6x4xf32>, tensor<2x3x6x4xf32>, tensor<2x3x5x4xf32>, tensor<2x3x5xf32>) -> (tensor<2x3x5x4xf32>, tensor<2x3x6x4xf32>, tensor<2x3x6x4xf32>)
  return %0#0, %0#1, %0#2 : tensor<2x3x5x4xf32>, tensor<2x3x6x4xf32>, tensor<2x3x6x4xf32>
}

// A boolean mask keeps where it is true; an explicit scale is used as given.
// CHECK-LABEL: func.func @masked
func.func @masked(%g: tensor<1x2x3x4xf32>, %q: tensor<1x2x3x4xf32>, %k: tensor<1x2x3x4xf32>, %v: tensor<1x2x3x4xf32>, %o: tensor<1x2x3x4xf32>, %lse: tensor<1x2x3xf32>, %mask: tensor<1x1x3x3xi1>) -> (tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>) {
  // CHECK: aten.mul.Scalar {{.*}} {other = 1.250000e-01 : f64}
  // CHECK: %[[NOT:.*]] = aten.logical_not %arg6
  // CHECK: aten.masked_fill.Scalar {{.*}}, %[[NOT]] {value = 0xFFF0000000000000 : f64}
  // CHECK-NOT: aten.gt.Tensor
  // CHECK-NOT: flash_attention_for_cpu_backward
  %0:3 = "aten._scaled_dot_product_flash_attention_for_cpu_backward"(%g, %q, %k, %v, %o, %lse, %mask) {dropout_p = 0.0 : f64, is_causal = false, scale = 0.125 : f64, operand_segment_sizes = array<i32: 1, 1, 1, 1, 1, 1, 1>} : (tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3xf32>, tensor<1x1x3x3xi1>) -> (tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>)
  return %0#0, %0#1, %0#2 : tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>
}

// Grouped key/value heads are left to the kernel (a build error on CUDA).
// CHECK-LABEL: func.func @grouped
// CHECK: aten._scaled_dot_product_flash_attention_for_cpu_backward
func.func @grouped(%g: tensor<1x4x3x4xf32>, %q: tensor<1x4x3x4xf32>, %k: tensor<1x2x3x4xf32>, %v: tensor<1x2x3x4xf32>, %o: tensor<1x4x3x4xf32>, %lse: tensor<1x4x3xf32>) -> (tensor<1x4x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>) {
  %0:3 = "aten._scaled_dot_product_flash_attention_for_cpu_backward"(%g, %q, %k, %v, %o, %lse) {dropout_p = 0.0 : f64, is_causal = false, operand_segment_sizes = array<i32: 1, 1, 1, 1, 1, 1, 0>} : (tensor<1x4x3x4xf32>, tensor<1x4x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x4x3x4xf32>, tensor<1x4x3xf32>) -> (tensor<1x4x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>)
  return %0#0, %0#1, %0#2 : tensor<1x4x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>
}
