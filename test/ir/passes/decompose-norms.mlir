// dynoc-decompose computes vector norms (every order) from reductions and
// elementwise ops (lib/passes/StatisticsDecompositions.cpp).
// RUN: dynoc opt %s --pass=dynoc-decompose | FileCheck %s

// ConvNeXt V2's global response normalization: the norm over H and W.
// CHECK-LABEL: func.func @vector_norm_keepdim
func.func @vector_norm_keepdim(%x: tensor<2x4x4x16xf32>) -> tensor<2x1x1x16xf32> {
  // CHECK: %[[SQ:.*]] = aten.mul.Tensor %arg0, %arg0
  // CHECK: %[[S:.*]] = aten.sum.dim_IntList %[[SQ]] {dim = array<i64: 1, 2>, keepdim = true} : (tensor<2x4x4x16xf32>) -> tensor<2x1x1x16xf32>
  // CHECK: %[[N:.*]] = aten.sqrt %[[S]]
  // CHECK: return %[[N]]
  %0 = aten.linalg_vector_norm %x {ord = 2 : i64, dim = array<i64: 1, 2>, keepdim = true} : (tensor<2x4x4x16xf32>) -> tensor<2x1x1x16xf32>
  return %0 : tensor<2x1x1x16xf32>
}

// Order 1: the sum of magnitudes.
// CHECK-LABEL: func.func @vector_norm_l1
func.func @vector_norm_l1(%x: tensor<3x5xf32>) -> tensor<3xf32> {
  // CHECK: %[[A:.*]] = aten.abs %arg0
  // CHECK: %[[S:.*]] = aten.sum.dim_IntList %[[A]] {dim = array<i64: 1>, keepdim = true}
  // CHECK: aten.view %[[S]] {size = array<i64: 3>}
  // CHECK-NOT: linalg_vector_norm
  %0 = aten.linalg_vector_norm %x {ord = 1 : i64, dim = array<i64: 1>} : (tensor<3x5xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// torch.norm(x, p=3, dim=0): the p-th root of the sum of |x|^p.
// CHECK-LABEL: func.func @norm_p3
func.func @norm_p3(%x: tensor<3x5xf32>) -> tensor<5xf32> {
  // CHECK: %[[A:.*]] = aten.abs %arg0
  // CHECK: %[[P:.*]] = aten.pow.Tensor_Scalar %[[A]] {exponent = 3.000000e+00 : f64}
  // CHECK: %[[S:.*]] = aten.sum.dim_IntList %[[P]] {dim = array<i64: 0>, keepdim = true}
  // CHECK: aten.pow.Tensor_Scalar %[[S]] {exponent = 0.33333333333333331 : f64}
  %0 = "aten.norm.ScalarOpt_dim"(%x) {p = 3 : i64, dim = array<i64: 0>} : (tensor<3x5xf32>) -> tensor<5xf32>
  return %0 : tensor<5xf32>
}

// The infinity norm: the largest magnitude.
// CHECK-LABEL: func.func @vector_norm_inf
func.func @vector_norm_inf(%x: tensor<3x5xf32>) -> tensor<3x1xf32> {
  // CHECK: %[[A:.*]] = aten.abs %arg0
  // CHECK: aten.amax %[[A]] {dim = array<i64: 1>, keepdim = true}
  %0 = aten.linalg_vector_norm %x {ord = 0x7FF0000000000000 : f64, dim = array<i64: 1>, keepdim = true} : (tensor<3x5xf32>) -> tensor<3x1xf32>
  return %0 : tensor<3x1xf32>
}

// torch.nn.utils.weight_norm over dim 2 (wav2vec2's positional convolution).
// CHECK-LABEL: func.func @weight_norm
func.func @weight_norm(%v: tensor<8x4x16xf32>, %g: tensor<1x1x16xf32>) -> tensor<8x4x16xf32> {
  // CHECK: %[[SQ:.*]] = aten.mul.Tensor %arg0, %arg0
  // CHECK: %[[S:.*]] = aten.sum.dim_IntList %[[SQ]] {dim = array<i64: 0, 1>, keepdim = true} : (tensor<8x4x16xf32>) -> tensor<1x1x16xf32>
  // CHECK: %[[N:.*]] = aten.sqrt %[[S]]
  // CHECK: %[[K:.*]] = aten.div.Tensor %arg1, %[[N]]
  // CHECK: %[[W:.*]] = aten.mul.Tensor %arg0, %[[K]]
  // CHECK: return %[[W]]
  %w, %n = aten._weight_norm_interface %v, %g {dim = 2 : i64} : (tensor<8x4x16xf32>, tensor<1x1x16xf32>) -> (tensor<8x4x16xf32>, tensor<1x1x16xf32>)
  return %w : tensor<8x4x16xf32>
}
