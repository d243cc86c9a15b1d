// dynoc-decompose: diagonal as as_strided of the dense layout
// (DataMovementDecompositions.cpp), any/all as amax/amin of `x != 0`
// (StatisticsDecompositions.cpp), masked_scatter as a gather at the mask's
// running count.
// RUN: dynoc opt %s --pass=dynoc-decompose | FileCheck %s

// dims [20, 5, 1]: the diagonal of dims 1 and 2 above the main one starts at
// element 1 and steps 5 + 1; dim 0 comes first.
// CHECK-LABEL: func.func @diagonal
func.func @diagonal(%x: tensor<3x4x5xf32>) -> tensor<3x4xf32> {
  // CHECK: aten.as_strided %arg0 {size = array<i64: 3, 4>, storage_offset = 1 : i64, stride = array<i64: 20, 6>}
  // CHECK-NOT: aten.diagonal
  %0 = aten.diagonal %x {offset = 1 : i64, dim1 = 1 : i64, dim2 = 2 : i64} : (tensor<3x4x5xf32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// CHECK-LABEL: func.func @any_dim
func.func @any_dim(%x: tensor<4x5xf32>) -> tensor<4xi1> {
  // CHECK: %[[T:.*]] = aten.ne.Scalar %arg0 {other = 0.000000e+00 : f64} : (tensor<4x5xf32>) -> tensor<4x5xi1>
  // CHECK: aten.amax %[[T]] {dim = array<i64: 1>, keepdim = false} : (tensor<4x5xi1>) -> tensor<4xi1>
  %0 = aten.any.dim %x {dim = -1 : i64} : (tensor<4x5xf32>) -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

// all of uint8 is uint8, as in ATen.
// CHECK-LABEL: func.func @all_uint8
func.func @all_uint8(%x: tensor<4x5xui8>) -> tensor<ui8> {
  // CHECK: %[[T:.*]] = aten.ne.Scalar %arg0 {other = 0 : i64}
  // CHECK: %[[R:.*]] = aten.amin %[[T]] {dim = array<i64: 0, 1>, keepdim = false} : (tensor<4x5xi1>) -> tensor<i1>
  // CHECK: aten._to_copy %[[R]] {dtype = ui8} : (tensor<i1>) -> tensor<ui8>
  %0 = aten.all %x : (tensor<4x5xui8>) -> tensor<ui8>
  return %0 : tensor<ui8>
}

// CHECK-LABEL: func.func @masked_scatter
func.func @masked_scatter(%x: tensor<2x3xf32>, %m: tensor<3xi1>, %s: tensor<6xf32>) -> tensor<2x3xf32> {
  // CHECK: %[[M:.*]] = aten.expand %arg1 {size = array<i64: 2, 3>}
  // CHECK: %[[F:.*]] = aten.reshape %[[M]] {shape = array<i64: 6>}
  // CHECK: %[[C:.*]] = aten.cumsum %[[F]] {dim = 0 : i64, dtype = i64}
  // CHECK: %[[P:.*]] = aten.sub.Scalar %[[C]] {other = 1 : i64}
  // CHECK: %[[S:.*]] = aten.reshape %arg2
  // CHECK: %[[G:.*]] = "aten.index.Tensor"(%[[S]], %[[P]])
  // CHECK: %[[V:.*]] = aten.reshape %[[G]] {shape = array<i64: 2, 3>}
  // CHECK: aten.where.self %[[M]], %[[V]], %arg0
  %0 = aten.masked_scatter %x, %m, %s : (tensor<2x3xf32>, tensor<3xi1>, tensor<6xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
