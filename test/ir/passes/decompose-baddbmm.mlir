// dynoc-decompose makes baddbmm bmm plus elementwise ops
// (lib/passes/MatmulDecompositions.cpp): beta * self + alpha * bmm(b1, b2).
// RUN: dynoc opt %s --pass=dynoc-decompose | FileCheck %s

// Bloom's attention: an ALiBi bias (broadcast over the queries) plus the
// scaled scores.
// CHECK-LABEL: func.func @baddbmm_bloom
func.func @baddbmm_bloom(%bias: tensor<8x1x12xf32>, %q: tensor<8x12x8xf32>, %k: tensor<8x8x12xf32>) -> tensor<8x12x12xf32> {
  // CHECK: %[[P:.*]] = aten.bmm %arg1, %arg2 : (tensor<8x12x8xf32>, tensor<8x8x12xf32>) -> tensor<8x12x12xf32>
  // CHECK: %[[S:.*]] = aten.mul.Scalar %[[P]] {other = 3.535530e-01 : f64}
  // CHECK: %[[R:.*]] = aten.add.Tensor %arg0, %[[S]] : (tensor<8x1x12xf32>, tensor<8x12x12xf32>) -> tensor<8x12x12xf32>
  // CHECK: return %[[R]]
  %0 = aten.baddbmm %bias, %q, %k {beta = 1.0 : f64, alpha = 0.353553 : f64} : (tensor<8x1x12xf32>, tensor<8x12x8xf32>, tensor<8x8x12xf32>) -> tensor<8x12x12xf32>
  return %0 : tensor<8x12x12xf32>
}

// beta = 0: self is not read.
// CHECK-LABEL: func.func @baddbmm_beta0
func.func @baddbmm_beta0(%s: tensor<2x3x4xf32>, %a: tensor<2x3x5xf32>, %b: tensor<2x5x4xf32>) -> tensor<2x3x4xf32> {
  // CHECK: %[[P:.*]] = aten.bmm %arg1, %arg2
  // CHECK-NOT: aten.add.Tensor
  // CHECK: return %[[P]]
  %0 = aten.baddbmm %s, %a, %b {beta = 0 : i64} : (tensor<2x3x4xf32>, tensor<2x3x5xf32>, tensor<2x5x4xf32>) -> tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
}
