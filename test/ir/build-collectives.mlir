// A collective is a call into the communicator libdynrt binds
// (dynoc_bind_collectives, exported only by a model with collectives): the
// input goes into the result's buffer, the call starts it, its wait waits for
// its work handle, and the wait's result is the collective's own storage.
// The manifest lists the process groups and their sizes. The CUDA target
// calls the same functions (with its run's stream, which the communicator
// orders the collective after).
// RUN: dynoc build %s -o %t.cpp --emit=cpp
// RUN: FileCheck %s < %t.cpp
// RUN: dynoc build --target=cuda %s -o %t.cu --emit=cu
// RUN: FileCheck %s < %t.cu

func.func @graph_0(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<8x8xf32>, tensor<2x8xf32>) attributes {dynoc.inputs = [{kind = "user", name = "L['x']"}]} {
  %0 = "dynoc.all_reduce"(%x) {reduce_op = "max", group_size = 2 : i64, group_name = "0"} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = "dynoc.wait_tensor"(%0) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = "aten.relu"(%1) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %3 = "dynoc.all_gather_into_tensor"(%2) {group_size = 2 : i64, group_name = "0"} : (tensor<4x8xf32>) -> tensor<8x8xf32>
  %4 = "dynoc.wait_tensor"(%3) : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %5 = "dynoc.reduce_scatter_tensor"(%2) {reduce_op = "sum", group_size = 2 : i64, group_name = "0"} : (tensor<4x8xf32>) -> tensor<2x8xf32>
  %6 = "dynoc.wait_tensor"(%5) : (tensor<2x8xf32>) -> tensor<2x8xf32>
  return %2, %4, %6 : tensor<4x8xf32>, tensor<8x8xf32>, tensor<2x8xf32>
}

// CHECK: extern "C" DYNOC_EXPORT int dynoc_bind_collectives(const void *c) {
// CHECK: void *work0 = nullptr;
// CHECK-NEXT: if (int rc = dynoc_k::collective(dynoc_k::kAllReduce, "0", a0, [[AR:[a-z0-9]+]], 32, 32, 4, int64_t(0), &work0)) return rc;
// CHECK: if (int rc = dynoc_k::collective_wait(work0)) return rc;
// The all-gather and the reduce-scatter are in flight together (their waits
// moved to the end by dynoc-defer-waits).
// CHECK: dynoc_k::collective(dynoc_k::kAllGather, "0", {{[a-z0-9]+}}, {{[a-z0-9]+}}, 32, 64, 0, int64_t(0), &work1)) return rc;
// CHECK: dynoc_k::collective(dynoc_k::kReduceScatter, "0", {{[a-z0-9]+}}, {{[a-z0-9]+}}, 32, 16, 0, int64_t(0), &work2)) return rc;
// CHECK: if (int rc = dynoc_k::collective_wait(work1)) return rc;
// CHECK: if (int rc = dynoc_k::collective_wait(work2)) return rc;
// CHECK: "process_groups": [
// CHECK-NEXT: {
// CHECK-NEXT: "name": "0",
// CHECK-NEXT: "size": 2
