// dynoc-decompose rewrites composite ops by the table in
// lib/passes/Decompositions.td and leaves everything else alone.
// RUN: dynoc opt %s --pass=dynoc-decompose | FileCheck %s

// CHECK-LABEL: func.func @silu
func.func @silu(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // CHECK: %[[S:.*]] = aten.sigmoid %arg0 : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK: %[[M:.*]] = aten.mul.Tensor %arg0, %[[S]]
  // CHECK-NOT: aten.silu
  // CHECK: return %[[M]]
  %0 = aten.silu %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @square_and_hardswish
func.func @square_and_hardswish(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  // CHECK: %[[SQ:.*]] = aten.mul.Tensor %arg0, %arg0 : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  // CHECK: %[[HS:.*]] = aten.hardsigmoid %[[SQ]]
  // CHECK: aten.mul.Tensor %[[SQ]], %[[HS]]
  %0 = aten.square %x : (tensor<?x8xf32>) -> tensor<?x8xf32>
  %1 = aten.hardswish %0 : (tensor<?x8xf32>) -> tensor<?x8xf32>
  return %1 : tensor<?x8xf32>
}

// CHECK-LABEL: func.func @t
func.func @t(%m: tensor<3x5xf32>, %v: tensor<5xf32>) -> (tensor<5x3xf32>, tensor<5xf32>) {
  // A 2-D t is a transpose of dims 0 and 1; t of a 1-D tensor stays.
  // CHECK: aten.transpose.int %arg0 {dim0 = 0 : i64, dim1 = 1 : i64}
  // CHECK: aten.t %arg1
  %0 = aten.t %m : (tensor<3x5xf32>) -> tensor<5x3xf32>
  %1 = aten.t %v : (tensor<5xf32>) -> tensor<5xf32>
  return %0, %1 : tensor<5x3xf32>, tensor<5xf32>
}

// CHECK-LABEL: func.func @untouched
func.func @untouched(%x: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK-NEXT: aten.relu
  %0 = aten.relu %x : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
