// dynoc-decompose rewrites the composite pointwise ops optimizers call
// (lib/passes/PointwiseDecompositions.cpp) into core elementwise ops, in
// ATen's order of operations.
// RUN: dynoc opt %s --pass=dynoc-decompose | FileCheck %s

// CHECK-LABEL: func.func @addcdiv
func.func @addcdiv(%p: tensor<4x8xf32>, %m: tensor<4x8xf32>, %d: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // CHECK: %[[S:.*]] = aten.mul.Scalar %arg1 {other = -1.000000e-02 : f64}
  // CHECK: %[[Q:.*]] = aten.div.Tensor %[[S]], %arg2
  // CHECK: %[[R:.*]] = aten.add.Tensor %arg0, %[[Q]]
  // CHECK-NOT: addcdiv
  // CHECK: return %[[R]]
  %0 = aten.addcdiv %p, %m, %d {value = -0.01 : f64} : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// A broadcast operand: the product takes the broadcast shape.
// CHECK-LABEL: func.func @addcmul_broadcast
func.func @addcmul_broadcast(%s: tensor<4x8xf32>, %a: tensor<8xf32>, %b: tensor<4x1xf32>) -> tensor<4x8xf32> {
  // CHECK: %[[S:.*]] = aten.mul.Scalar %arg1 {other = 1.000000e-03 : f64} : (tensor<8xf32>) -> tensor<8xf32>
  // CHECK: %[[P:.*]] = aten.mul.Tensor %[[S]], %arg2 : (tensor<8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  // CHECK: aten.add.Tensor %arg0, %[[P]]
  %0 = aten.addcmul %s, %a, %b {value = 0.001 : f64} : (tensor<4x8xf32>, tensor<8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// Adam's exp_avg.lerp_(grad, 1 - beta1): a small weight, self + w * (end - self).
// CHECK-LABEL: func.func @lerp_small
func.func @lerp_small(%s: tensor<8xf32>, %e: tensor<8xf32>) -> tensor<8xf32> {
  // CHECK: %[[D:.*]] = aten.sub.Tensor %arg1, %arg0
  // CHECK: %[[W:.*]] = aten.mul.Scalar %[[D]] {other = 1.000000e-01 : f64}
  // CHECK: aten.add.Tensor %arg0, %[[W]]
  %0 = aten.lerp.Scalar %s, %e {weight = 0.1 : f64} : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// A large weight: end - (end - self) * (1 - w).
// CHECK-LABEL: func.func @lerp_large
func.func @lerp_large(%s: tensor<8xf32>, %e: tensor<8xf32>) -> tensor<8xf32> {
  // CHECK: %[[D:.*]] = aten.sub.Tensor %arg1, %arg0
  // CHECK: %[[W:.*]] = aten.mul.Scalar %[[D]] {other = 2.500000e-01 : f64}
  // CHECK: aten.sub.Tensor %arg1, %[[W]]
  %0 = aten.lerp.Scalar %s, %e {weight = 0.75 : f64} : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// 1 - beta ** step: rsub as -(x) + 1.
// CHECK-LABEL: func.func @rsub
func.func @rsub(%x: tensor<f32>) -> tensor<f32> {
  // CHECK: %[[N:.*]] = aten.neg %arg0
  // CHECK: aten.add.Scalar %[[N]] {other = 1 : i64}
  %0 = aten.rsub.Scalar %x {other = 1 : i64} : (tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// log_sigmoid_forward = (min(x, 0) - log1p(z), z), z = exp(-|x|) (ATen's CPU buffer).
// CHECK-LABEL: func.func @log_sigmoid_forward
func.func @log_sigmoid_forward(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  // CHECK: %[[A:.*]] = aten.abs %arg0
  // CHECK: %[[N:.*]] = aten.neg %[[A]]
  // CHECK: %[[Z:.*]] = aten.exp %[[N]]
  // CHECK: %[[LOW:.*]] = aten.clamp_max %arg0 {max = 0.000000e+00 : f64}
  // CHECK: %[[L:.*]] = aten.log1p %[[Z]]
  // CHECK: %[[O:.*]] = aten.sub.Tensor %[[LOW]], %[[L]]
  // CHECK: return %[[O]], %[[Z]]
  %0:2 = aten.log_sigmoid_forward %x : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  return %0#0, %0#1 : tensor<4xf32>, tensor<4xf32>
}

// softshrink(x, 0.5) = x - clamp(x, -0.5, 0.5); hardshrink(x, 0.5): |x| <= 0.5 ? 0 : x.
// CHECK-LABEL: func.func @shrinks
func.func @shrinks(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  // CHECK: %[[C:.*]] = aten.clamp %arg0 {max = 5.000000e-01 : f64, min = -5.000000e-01 : f64}
  // CHECK: aten.sub.Tensor %arg0, %[[C]]
  // CHECK: %[[A:.*]] = aten.abs %arg0
  // CHECK: %[[M:.*]] = aten.le.Scalar %[[A]] {other = 5.000000e-01 : f64}
  // CHECK: aten.masked_fill.Scalar %arg0, %[[M]] {value = 0.000000e+00 : f64}
  %0 = aten.softshrink %x {lambd = 5.000000e-01 : f64} : (tensor<4xf32>) -> tensor<4xf32>
  %1 = aten.hardshrink %x {lambd = 5.000000e-01 : f64} : (tensor<4xf32>) -> tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}
