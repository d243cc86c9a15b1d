// dynoc-defer-waits: an all-reduce's wait (and the slices and reshapes of
// its result) moves down to the first op that uses it, so the ops between
// run while it is in flight; an all-gather's wait stays (the communicator
// reads its input until then).
// RUN: dynoc opt %s --pass=dynoc-defer-waits | FileCheck %s

// CHECK-LABEL: func.func @overlap
// CHECK-NEXT: %[[AR:.*]] = "dynoc.all_reduce"(%arg0)
// CHECK-NEXT: %[[AG:.*]] = "dynoc.all_gather_into_tensor"(%arg1)
// CHECK-NEXT: %[[AGW:.*]] = "dynoc.wait_tensor"(%[[AG]])
// CHECK-NEXT: %[[M:.*]] = aten.mul.Tensor %arg1, %arg1
// CHECK-NEXT: %[[E:.*]] = aten.exp %[[M]]
// CHECK-NEXT: %[[W:.*]] = "dynoc.wait_tensor"(%[[AR]])
// CHECK-NEXT: %[[S:.*]] = aten.slice.Tensor %[[W]]
// CHECK-NEXT: %[[R:.*]] = aten.reshape %[[S]]
// CHECK-NEXT: aten.add.Tensor %[[E]], %[[R]]
func.func @overlap(%g: tensor<16xf32>, %x: tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<4x4xf32>) {
  %0 = "dynoc.all_reduce"(%g) {reduce_op = "avg", group_size = 2 : i64, group_name = "0"} : (tensor<16xf32>) -> tensor<16xf32>
  %1 = "dynoc.wait_tensor"(%0) : (tensor<16xf32>) -> tensor<16xf32>
  %2 = aten.slice.Tensor %1 {dim = 0 : i64, start = 0 : i64, end = 8 : i64, step = 1 : i64} : (tensor<16xf32>) -> tensor<8xf32>
  %3 = aten.reshape %2 {shape = array<i64: 2, 4>} : (tensor<8xf32>) -> tensor<2x4xf32>
  %4 = "dynoc.all_gather_into_tensor"(%x) {group_size = 2 : i64, group_name = "0"} : (tensor<2x4xf32>) -> tensor<4x4xf32>
  %5 = "dynoc.wait_tensor"(%4) : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %6 = aten.mul.Tensor %x, %x : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %7 = aten.exp %6 : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %8 = aten.add.Tensor %7, %3 : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  return %8, %5 : tensor<2x4xf32>, tensor<4x4xf32>
}
