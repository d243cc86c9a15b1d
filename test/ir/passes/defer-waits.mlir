// dynoc-defer-waits: ops that need no collective's result go first, then
// each collective's wait with the ops that need it, in the order the
// collectives were issued: the all-reduce is in flight during mul and exp,
// the all-gather until the end; the update of what the first collective
// carried runs before the second's wait.
// RUN: dynoc opt %s --pass=dynoc-defer-waits | FileCheck %s

// CHECK-LABEL: func.func @overlap
// CHECK-NEXT: %[[AR:.*]] = "dynoc.all_reduce"(%arg0)
// CHECK-NEXT: %[[AG:.*]] = "dynoc.all_gather_into_tensor"(%arg1)
// CHECK-NEXT: %[[M:.*]] = aten.mul.Tensor %arg1, %arg1
// CHECK-NEXT: %[[E:.*]] = aten.exp %[[M]]
// CHECK-NEXT: %[[W:.*]] = "dynoc.wait_tensor"(%[[AR]])
// CHECK-NEXT: %[[S:.*]] = aten.slice.Tensor %[[W]]
// CHECK-NEXT: %[[R:.*]] = aten.reshape %[[S]]
// CHECK-NEXT: %[[A:.*]] = aten.add.Tensor %[[E]], %[[R]]
// CHECK-NEXT: %[[AGW:.*]] = "dynoc.wait_tensor"(%[[AG]])
// CHECK-NEXT: return %[[A]], %[[AGW]]
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

// Tensor-parallel layers: the second all-reduce reads what the first one's
// wait gave; both stay in order, each wait before its first use.
// CHECK-LABEL: func.func @chained
// CHECK-NEXT: "dynoc.all_reduce"(%arg0)
// CHECK-NEXT: %[[N:.*]] = aten.neg %arg1
// CHECK-NEXT: %[[W0:.*]] = "dynoc.wait_tensor"
// CHECK-NEXT: %[[R:.*]] = aten.relu %[[W0]]
// CHECK-NEXT: %[[AR1:.*]] = "dynoc.all_reduce"(%[[R]])
// CHECK-NEXT: %[[W1:.*]] = "dynoc.wait_tensor"(%[[AR1]])
// CHECK-NEXT: return %[[W1]], %[[N]]
func.func @chained(%a: tensor<8xf32>, %b: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %0 = "dynoc.all_reduce"(%a) {reduce_op = "sum", group_size = 2 : i64, group_name = "0"} : (tensor<8xf32>) -> tensor<8xf32>
  %1 = "dynoc.wait_tensor"(%0) : (tensor<8xf32>) -> tensor<8xf32>
  %2 = aten.relu %1 : (tensor<8xf32>) -> tensor<8xf32>
  %3 = "dynoc.all_reduce"(%2) {reduce_op = "sum", group_size = 2 : i64, group_name = "0"} : (tensor<8xf32>) -> tensor<8xf32>
  %4 = "dynoc.wait_tensor"(%3) : (tensor<8xf32>) -> tensor<8xf32>
  %5 = aten.neg %b : (tensor<8xf32>) -> tensor<8xf32>
  return %4, %5 : tensor<8xf32>, tensor<8xf32>
}
