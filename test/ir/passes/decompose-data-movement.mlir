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

// Other dims: advanced indexing along the dim.
// CHECK-LABEL: func.func @index_select_columns
func.func @index_select_columns(%m: tensor<4x6xf32>, %ids: tensor<3xi64>) -> tensor<4x3xf32> {
  // CHECK: "aten.index.Tensor"(%arg0, %arg1) {indices_none = array<i64: 0>} : (tensor<4x6xf32>, tensor<3xi64>) -> tensor<4x3xf32>
  // CHECK-NOT: aten.index_select
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

// flip: each dim read backwards through an index.
// CHECK-LABEL: func.func @flip
func.func @flip(%x: tensor<3x4xf32>) -> tensor<3x4xf32> {
  // CHECK: %[[R:.*]] = aten.arange.start_step {end = -1 : i64, start = 3 : i64, step = -1 : i64} : () -> tensor<4xi64>
  // CHECK: "aten.index.Tensor"(%arg0, %[[R]]) {indices_none = array<i64: 0>}
  %0 = aten.flip %x {dims = array<i64: -1>} : (tensor<3x4xf32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// roll by 1 along dim 0: the last row, then the others.
// CHECK-LABEL: func.func @roll
func.func @roll(%x: tensor<3x4xf32>) -> tensor<3x4xf32> {
  // CHECK: %[[A:.*]] = aten.slice.Tensor %arg0 {dim = 0 : i64, end = 3 : i64, start = 2 : i64, step = 1 : i64}
  // CHECK: %[[B:.*]] = aten.slice.Tensor %arg0 {dim = 0 : i64, end = 2 : i64, start = 0 : i64, step = 1 : i64}
  // CHECK: "aten.cat"(%[[A]], %[[B]]) {dim = 0 : i64}
  %0 = aten.roll %x {shifts = array<i64: 1>, dims = array<i64: 0>} : (tensor<3x4xf32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// repeat: a view with a unit dim before each, an expand, a reshape.
// CHECK-LABEL: func.func @repeat
func.func @repeat(%x: tensor<2x3xf32>) -> tensor<2x4x9xf32> {
  // CHECK: aten.view %arg0 {size = array<i64: 1, 1, 1, 2, 1, 3>}
  // CHECK: aten.expand {{.*}} {size = array<i64: 2, 1, 2, 2, 3, 3>}
  // CHECK: aten.reshape {{.*}} {shape = array<i64: 2, 4, 9>}
  %0 = aten.repeat %x {repeats = array<i64: 2, 2, 3>} : (tensor<2x3xf32>) -> tensor<2x4x9xf32>
  return %0 : tensor<2x4x9xf32>
}

// pixel_shuffle(x, 2): [C*4, H, W] viewed, permuted, reshaped.
// CHECK-LABEL: func.func @pixel_shuffle
func.func @pixel_shuffle(%x: tensor<1x8x3x5xf32>) -> tensor<1x2x6x10xf32> {
  // CHECK: aten.view %arg0 {size = array<i64: 1, 2, 2, 2, 3, 5>}
  // CHECK: aten.permute {{.*}} {dims = array<i64: 0, 1, 4, 2, 5, 3>}
  // CHECK: aten.reshape {{.*}} {shape = array<i64: 1, 2, 6, 10>}
  %0 = aten.pixel_shuffle %x {upscale_factor = 2 : i64} : (tensor<1x8x3x5xf32>) -> tensor<1x2x6x10xf32>
  return %0 : tensor<1x2x6x10xf32>
}
