// Collectives (CollectiveOps.td) are checked when verified: a reduce_op torch
// does not have, a result whose dim 0 does not follow from the group's size,
// a source rank outside the group, a wait that changes its tensor's type.
// RUN: dynoc opt %s --split-input-file --verify-diagnostics

func.func @reduce_op(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'dynoc.all_reduce' op has unknown reduce_op 'mean' (expected sum, avg, product, min or max)}}
  %0 = "dynoc.all_reduce"(%x) {reduce_op = "mean", group_size = 2 : i64, group_name = "0"} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @gather_dim0(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'dynoc.all_gather_into_tensor' op gives dim 0 of 4 from 4 over a group of 2 ranks}}
  %0 = "dynoc.all_gather_into_tensor"(%x) {group_size = 2 : i64, group_name = "0"} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @scatter_other_dim(%x: tensor<4x8xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{'dynoc.reduce_scatter_tensor' op changes dim 1 ('tensor<4x8xf32>' to 'tensor<2x4xf32>'): only dim 0 may}}
  %0 = "dynoc.reduce_scatter_tensor"(%x) {reduce_op = "sum", group_size = 2 : i64, group_name = "0"} : (tensor<4x8xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @broadcast_src(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'dynoc.broadcast' op has source rank 2 in a group of 2}}
  %0 = "dynoc.broadcast"(%x) {src = 2 : i64, group_size = 2 : i64, group_name = "0"} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @wait_type(%x: tensor<4xf32>) -> tensor<4xf64> {
  // expected-error @+1 {{'dynoc.wait_tensor' op gives 'tensor<4xf64>' for 'tensor<4xf32>' (the same type)}}
  %0 = "dynoc.wait_tensor"(%x) : (tensor<4xf32>) -> tensor<4xf64>
  return %0 : tensor<4xf64>
}

// -----

func.func @all_to_all_splits(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'dynoc.all_to_all_single' op has 3 input split sizes for a group of 2 ranks}}
  %0 = "dynoc.all_to_all_single"(%x) {output_split_sizes = array<i64: 2, 2>, input_split_sizes = array<i64: 1, 1, 2>, group_size = 2 : i64, group_name = "0"} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @all_to_all_rows(%x: tensor<4x8xf32>) -> tensor<6x8xf32> {
  // expected-error @+1 {{'dynoc.all_to_all_single' op gives dim 0 of 6 from output slices of 5 rows}}
  %0 = "dynoc.all_to_all_single"(%x) {output_split_sizes = array<i64: 2, 3>, input_split_sizes = array<i64: 2, 2>, group_size = 2 : i64, group_name = "0"} : (tensor<4x8xf32>) -> tensor<6x8xf32>
  return %0 : tensor<6x8xf32>
}
