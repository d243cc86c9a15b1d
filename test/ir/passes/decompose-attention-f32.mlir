// With attention-f32 (a target whose f32 attention kernel is slow: CUDA),
// dynoc-decompose writes f32/f64 attention whose log-sum-exp nothing reads as
// softmax(Q K^T * scale) V (lib/passes/AttentionDecompositions.cpp); bf16
// attention and attention whose log-sum-exp a backward reads keep the kernel.
// RUN: dynoc opt %s --pass="dynoc-decompose{attention-f32=true}" | FileCheck %s

// CHECK-LABEL: func.func @causal_f32
func.func @causal_f32(%q: tensor<2x3x5x4xf32>, %k: tensor<2x3x6x4xf32>, %v: tensor<2x3x6x8xf32>) -> tensor<2x3x5x8xf32> {
  // CHECK: aten.bmm {{.*}} : (tensor<6x5x4xf32>, tensor<6x4x6xf32>) -> tensor<6x5x6xf32>
  // CHECK: aten.mul.Scalar {{.*}} {other = 5.000000e-01 : f64}
  // CHECK: aten.masked_fill.Scalar
  // CHECK: %[[P:.*]] = aten._softmax {{.*}} {dim = -1 : i64, half_to_float = false}
  // CHECK: aten.reshape %[[P]] {shape = array<i64: 6, 5, 6>}
  // CHECK: aten.bmm {{.*}} : (tensor<6x5x6xf32>, tensor<6x6x8xf32>) -> tensor<6x5x8xf32>
  // CHECK-NOT: flash_attention_for_cpu
  %0:2 = "aten._scaled_dot_product_flash_attention_for_cpu"(%q, %k, %v) {is_causal = true, operand_segment_sizes = array<i32: 1, 1, 1, 0>} : (tensor<2x3x5x4xf32>, tensor<2x3x6x4xf32>, tensor<2x3x6x8xf32>) -> (tensor<2x3x5x8xf32>, tensor<2x3x5xf32>)
  return %0#0 : tensor<2x3x5x8xf32>
}

// CHECK-LABEL: func.func @bf16
// CHECK: aten._scaled_dot_product_flash_attention_for_cpu
func.func @bf16(%q: tensor<1x2x3x4xbf16>) -> tensor<1x2x3x4xbf16> {
  %0:2 = "aten._scaled_dot_product_flash_attention_for_cpu"(%q, %q, %q) {operand_segment_sizes = array<i32: 1, 1, 1, 0>} : (tensor<1x2x3x4xbf16>, tensor<1x2x3x4xbf16>, tensor<1x2x3x4xbf16>) -> (tensor<1x2x3x4xbf16>, tensor<1x2x3xf32>)
  return %0#0 : tensor<1x2x3x4xbf16>
}

// CHECK-LABEL: func.func @logsumexp_read
// CHECK: aten._scaled_dot_product_flash_attention_for_cpu
func.func @logsumexp_read(%q: tensor<1x2x3x4xf32>) -> (tensor<1x2x3x4xf32>, tensor<1x2x3xf32>) {
  %0:2 = "aten._scaled_dot_product_flash_attention_for_cpu"(%q, %q, %q) {operand_segment_sizes = array<i32: 1, 1, 1, 0>} : (tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>) -> (tensor<1x2x3x4xf32>, tensor<1x2x3xf32>)
  return %0#0, %0#1 : tensor<1x2x3x4xf32>, tensor<1x2x3xf32>
}
