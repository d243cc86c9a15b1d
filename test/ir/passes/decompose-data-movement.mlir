// dynoc-decompose builds gathers and splits through core ops
// (lib/passes/DataMovementDecompositions.cpp).
// RUN: dynoc opt %s --pass=dynoc-decompose | FileCheck %s

// XGLM's sinusoidal positions: rows of a table.
// CHECK-LABEL: func.func @index_select_rows
func.func @index_select_rows(%table: tensor<66x32xf32>, %ids: tensor<24xi64>) -> tensor<24x32xf32> {
  // CHECK: %[[E:.*]] = aten.embedding %arg0, %arg1 : (tensor<66x32xf32>, tensor<24xi64>) -> tensor<24x32xf32>
  // CHECK-NOT: index_select
  // CHECK: return %[[E]]
  %0 = aten.index_select %table, %ids {dim = 0 : i64} : (tensor<66x32xf32>, tensor<24xi64>) -> tensor<24x32xf32>
  return %0 : tensor<24x32xf32>
}

// Other dims stay (a located build error if the backend lacks them).
// CHECK-LABEL: func.func @index_select_columns
func.func @index_select_columns(%m: tensor<4x6xf32>, %ids: tensor<3xi64>) -> tensor<4x3xf32> {
  // CHECK: aten.index_select
  %0 = aten.index_select %m, %ids {dim = 1 : i64} : (tensor<4x6xf32>, tensor<3xi64>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// GPTBigCode's fused projection, split into query and key/value.
// CHECK-LABEL: func.func @split_with_sizes
func.func @split_with_sizes(%x: tensor<2x12x48xf32>) -> (tensor<2x12x32xf32>, tensor<2x12x16xf32>) {
  // CHECK: %[[A:.*]] = aten.slice.Tensor %arg0 {dim = 2 : i64, end = 32 : i64, start = 0 : i64, step = 1 : i64} : (tensor<2x12x48xf32>) -> tensor<2x12x32xf32>
  // CHECK: %[[B:.*]] = aten.slice.Tensor %arg0 {dim = 2 : i64, end = 48 : i64, start = 32 : i64, step = 1 : i64} : (tensor<2x12x48xf32>) -> tensor<2x12x16xf32>
  // CHECK: return %[[A]], %[[B]]
  %0:2 = "aten.split_with_sizes"(%x) {split_sizes = array<i64: 32, 16>, dim = -1 : i64} : (tensor<2x12x48xf32>) -> (tensor<2x12x32xf32>, tensor<2x12x16xf32>)
  return %0#0, %0#1 : tensor<2x12x32xf32>, tensor<2x12x16xf32>
}
