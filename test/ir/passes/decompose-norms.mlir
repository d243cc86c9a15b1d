// dynoc-decompose computes Euclidean norms from reductions and elementwise
// ops (lib/passes/StatisticsDecompositions.cpp).
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

// Another order stays.
// CHECK-LABEL: func.func @vector_norm_l1
func.func @vector_norm_l1(%x: tensor<3x5xf32>) -> tensor<3xf32> {
  // CHECK: aten.linalg_vector_norm
  %0 = aten.linalg_vector_norm %x {ord = 1 : i64, dim = array<i64: 1>} : (tensor<3x5xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
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
