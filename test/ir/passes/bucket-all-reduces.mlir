// dynoc-bucket-all-reduces: the per-tensor all-reduces of DDP's gradient
// averaging merge, in the order the graph issues them, into buckets (the
// first of first-cap-mb MiB, then cap-mb): inputs flattened and
// concatenated, one all-reduce where the bucket's last member was, each
// result its slice reshaped. Different groups, reduce ops or dtypes never
// share a bucket; a member read before the next all-reduce closes its bucket.
// RUN: dynoc opt %s --pass='dynoc-bucket-all-reduces{cap-mb=25 first-cap-mb=1}' | FileCheck %s
// RUN: dynoc opt %s --pass='dynoc-bucket-all-reduces{cap-mb=0.0001 first-cap-mb=0.0001}' | FileCheck %s --check-prefix=SMALL

// CHECK-LABEL: func.func @grads
// CHECK: %[[G1:.*]] = aten.relu %arg1
// CHECK-NEXT: %[[F0:.*]] = aten.reshape %arg0 {shape = array<i64: 32>} : (tensor<4x8xf32>) -> tensor<32xf32>
// CHECK-NEXT: %[[CAT:.*]] = "aten.cat"(%[[F0]], %[[G1]]) {dim = 0 : i64} : (tensor<32xf32>, tensor<8xf32>) -> tensor<40xf32>
// CHECK-NEXT: %[[AR:.*]] = "dynoc.all_reduce"(%[[CAT]]) {group_name = "0", group_size = 2 : i64, reduce_op = "avg"} : (tensor<40xf32>) -> tensor<40xf32>
// CHECK-NEXT: %[[W:.*]] = "dynoc.wait_tensor"(%[[AR]])
// CHECK-NEXT: %[[S0:.*]] = aten.slice.Tensor %[[W]] {dim = 0 : i64, end = 32 : i64, start = 0 : i64, step = 1 : i64}
// CHECK-NEXT: %[[R0:.*]] = aten.reshape %[[S0]] {shape = array<i64: 4, 8>} : (tensor<32xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: %[[S1:.*]] = aten.slice.Tensor %[[W]] {dim = 0 : i64, end = 40 : i64, start = 32 : i64, step = 1 : i64}
// The other group's and the sum's stay alone.
// CHECK: "dynoc.all_reduce"(%arg2) {group_name = "1"
// CHECK: "dynoc.all_reduce"(%arg3) {group_name = "0", group_size = 2 : i64, reduce_op = "sum"}
// CHECK: return %[[R0]], %[[S1]]
// SMALL-LABEL: func.func @grads
// SMALL-NOT: aten.cat
func.func @grads(%g0: tensor<4x8xf32>, %x: tensor<8xf32>, %h: tensor<8xf32>, %s: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %0 = "dynoc.all_reduce"(%g0) {reduce_op = "avg", group_size = 2 : i64, group_name = "0"} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = "dynoc.wait_tensor"(%0) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %g1 = aten.relu %x : (tensor<8xf32>) -> tensor<8xf32>
  %2 = "dynoc.all_reduce"(%g1) {reduce_op = "avg", group_size = 2 : i64, group_name = "0"} : (tensor<8xf32>) -> tensor<8xf32>
  %3 = "dynoc.wait_tensor"(%2) : (tensor<8xf32>) -> tensor<8xf32>
  %4 = "dynoc.all_reduce"(%h) {reduce_op = "avg", group_size = 2 : i64, group_name = "1"} : (tensor<8xf32>) -> tensor<8xf32>
  %5 = "dynoc.wait_tensor"(%4) : (tensor<8xf32>) -> tensor<8xf32>
  %6 = "dynoc.all_reduce"(%s) {reduce_op = "sum", group_size = 2 : i64, group_name = "0"} : (tensor<8xf32>) -> tensor<8xf32>
  %7 = "dynoc.wait_tensor"(%6) : (tensor<8xf32>) -> tensor<8xf32>
  return %1, %3, %5, %7 : tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}

// A result read before the next all-reduce: two buckets of one (unchanged).
// CHECK-LABEL: func.func @read_early
// CHECK-NOT: aten.cat
// CHECK: return
func.func @read_early(%a: tensor<8xf32>, %b: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %0 = "dynoc.all_reduce"(%a) {reduce_op = "avg", group_size = 2 : i64, group_name = "0"} : (tensor<8xf32>) -> tensor<8xf32>
  %1 = "dynoc.wait_tensor"(%0) : (tensor<8xf32>) -> tensor<8xf32>
  %2 = aten.add.Tensor %1, %b : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %3 = "dynoc.all_reduce"(%2) {reduce_op = "avg", group_size = 2 : i64, group_name = "0"} : (tensor<8xf32>) -> tensor<8xf32>
  %4 = "dynoc.wait_tensor"(%3) : (tensor<8xf32>) -> tensor<8xf32>
  return %1, %4 : tensor<8xf32>, tensor<8xf32>
}
