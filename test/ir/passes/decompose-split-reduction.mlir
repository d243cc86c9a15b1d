// dynoc-decompose splits mean.dim and sum.dim_IntList over dims that are not
// adjacent into one reduction per run of adjacent dims (the code generators
// reduce adjacent dims only); reductions over adjacent dims stay as they are.
// RUN: dynoc opt %s --pass=dynoc-decompose | FileCheck %s

// CHECK-LABEL: func.func @mean_batch_and_spatial
// CHECK: %[[A:.*]] = aten.mean.dim %arg0 {dim = array<i64: 2, 3>, keepdim = true} : (tensor<2x4x6x6xf32>) -> tensor<2x4x1x1xf32>
// CHECK: %[[B:.*]] = aten.mean.dim %[[A]] {dim = array<i64: 0>, keepdim = true} : (tensor<2x4x1x1xf32>) -> tensor<1x4x1x1xf32>
// CHECK: aten.view %[[B]] {size = array<i64: 4>} : (tensor<1x4x1x1xf32>) -> tensor<4xf32>
func.func @mean_batch_and_spatial(%x: tensor<2x4x6x6xf32>) -> tensor<4xf32> {
  %0 = aten.mean.dim %x {dim = array<i64: 0, 2, 3>} : (tensor<2x4x6x6xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// CHECK-LABEL: func.func @sum_keepdim
// CHECK: %[[A:.*]] = aten.sum.dim_IntList %arg0 {dim = array<i64: 2>, keepdim = true} : (tensor<3x5x7xf32>) -> tensor<3x5x1xf32>
// CHECK: %[[B:.*]] = aten.sum.dim_IntList %[[A]] {dim = array<i64: 0>, keepdim = true} : (tensor<3x5x1xf32>) -> tensor<1x5x1xf32>
// CHECK-NOT: aten.view
// CHECK: return %[[B]]
func.func @sum_keepdim(%x: tensor<3x5x7xf32>) -> tensor<1x5x1xf32> {
  %0 = aten.sum.dim_IntList %x {dim = array<i64: -1, 0>, keepdim = true} : (tensor<3x5x7xf32>) -> tensor<1x5x1xf32>
  return %0 : tensor<1x5x1xf32>
}

// CHECK-LABEL: func.func @adjacent_stays
// CHECK: aten.mean.dim %arg0 {dim = array<i64: 1, 2>} : (tensor<3x5x7xf32>) -> tensor<3xf32>
// CHECK-NOT: aten.view
func.func @adjacent_stays(%x: tensor<3x5x7xf32>) -> tensor<3xf32> {
  %0 = aten.mean.dim %x {dim = array<i64: 1, 2>} : (tensor<3x5x7xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// max()/min() of a whole tensor become amax/amin over every dim.
// CHECK-LABEL: func.func @whole_max_min
// CHECK: aten.amax %arg0 {dim = array<i64: 0, 1>, keepdim = false} : (tensor<2x4xf32>) -> tensor<f32>
// CHECK: aten.amin %arg0 {dim = array<i64: 0, 1>, keepdim = false} : (tensor<2x4xf32>) -> tensor<f32>
// CHECK-NOT: aten.max
func.func @whole_max_min(%x: tensor<2x4xf32>) -> (tensor<f32>, tensor<f32>) {
  %0 = aten.max %x : (tensor<2x4xf32>) -> tensor<f32>
  %1 = aten.min %x : (tensor<2x4xf32>) -> tensor<f32>
  return %0, %1 : tensor<f32>, tensor<f32>
}
