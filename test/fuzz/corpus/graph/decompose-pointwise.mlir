// dynoc-decompose rewrites the composite pointwise ops optimizers call
// (lib/passes/PointwiseDecompositions.cpp) into core elementwise ops, in
// ATen's order of operations.

func.func @addcdiv(%p: tensor<4x8xf32>, %m: tensor<4x8xf32>, %d: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = aten.addcdiv %p, %m, %d {value = -0.01 : f64} : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// A broadcast operand: the product takes the broadcast shape.
func.func @addcmul_broadcast(%s: tensor<4x8xf32>, %a: tensor<8xf32>, %b: tensor<4x1xf32>) -> tensor<4x8xf32> {
  %0 = aten.addcmul %s, %a, %b {value = 0.001 : f64} : (tensor<4x8xf32>, tensor<8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// Adam's exp_avg.lerp_(grad, 1 - beta1): a small weight, self + w * (end - self).
func.func @lerp_small(%s: tensor<8xf32>, %e: tensor<8xf32>) -> tensor<8xf32> {
  %0 = aten.lerp.Scalar %s, %e {weight = 0.1 : f64} : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// A large weight: end - (end - self) * (1 - w).
func.func @lerp_large(%s: tensor<8xf32>, %e: tensor<8xf32>) -> tensor<8xf32> {
  %0 = aten.lerp.Scalar %s, %e {weight = 0.75 : f64} : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// 1 - beta ** step: rsub as -(x) + 1.
func.func @rsub(%x: tensor<f32>) -> tensor<f32> {
  %0 = aten.rsub.Scalar %x {other = 1 : i64} : (tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}
