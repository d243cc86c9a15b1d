// all_to_all_single: the split sizes become element counts per rank (rows
// times a row's elements; equal slices where the op gives none), and the
// call goes to the communicator's all_to_all; its wait as any collective's.
// RUN: dynoc build %s -o %t.cpp --emit=cpp
// RUN: FileCheck %s < %t.cpp
// RUN: dynoc build --target=cuda %s -o %t.cu --emit=cu
// RUN: FileCheck %s < %t.cu

func.func @graph_0(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<6x8xf32>) attributes {dynoc.inputs = [{kind = "user", name = "L['x']"}]} {
  %0 = "dynoc.all_to_all_single"(%x) {output_split_sizes = array<i64>, input_split_sizes = array<i64>, group_size = 2 : i64, group_name = "0"} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = "dynoc.wait_tensor"(%0) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = "dynoc.all_to_all_single"(%x) {output_split_sizes = array<i64: 3, 3>, input_split_sizes = array<i64: 1, 3>, group_size = 2 : i64, group_name = "0"} : (tensor<4x8xf32>) -> tensor<6x8xf32>
  %3 = "dynoc.wait_tensor"(%2) : (tensor<6x8xf32>) -> tensor<6x8xf32>
  return %1, %3 : tensor<4x8xf32>, tensor<6x8xf32>
}

// CHECK: const int64_t in_counts[] = {(4) / 2 * 8, (4) / 2 * 8}, out_counts[] = {(4) / 2 * 8, (4) / 2 * 8};
// CHECK-NEXT: if (int rc = dynoc_k::all_to_all("0", a0, {{[a-z0-9]+}}, in_counts, out_counts, 2, &work0)) return rc; }
// CHECK: const int64_t in_counts[] = {1 * 8, 3 * 8}, out_counts[] = {3 * 8, 3 * 8};
// CHECK-NEXT: if (int rc = dynoc_k::all_to_all("0", a0, {{[a-z0-9]+}}, in_counts, out_counts, 2, &work1)) return rc; }
// CHECK: dynoc_k::collective_wait(work0)
// CHECK: dynoc_k::collective_wait(work1)
