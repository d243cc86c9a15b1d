// Reductions view their input as (outer, n, inner) over one run of adjacent
// dims; a dynamic outer dim stays symbolic; dims that are not adjacent are
// split into runs by dynoc-decompose when the shape is static
// (passes/decompose-split-reduction.mlir) and an error at the op otherwise.
// RUN: dynoc build %s -o %t.cpp --emit=cpp && FileCheck %s < %t.cpp
// RUN: not dynoc build %S/Inputs/reduction-gap.mlir -o %t.so 2>&1 | FileCheck %S/Inputs/reduction-gap.mlir --check-prefix=GAP

func.func @graph_0(%x: tensor<?x4x6xf32>) -> (tensor<?x6xf32>, tensor<?x4x1xf32>, tensor<f32>) attributes {dynoc.inputs = [{kind = "user", name = "x"}]} {
  // CHECK: dynoc_k::reduce({{.*}}, a0, (in[0][0]), 4, 6, 0);
  %0 = "aten.sum.dim_IntList"(%x) {dim = array<i64: 1>} : (tensor<?x4x6xf32>) -> tensor<?x6xf32>
  // CHECK: dynoc_k::reduce({{.*}}, a0, (4 * in[0][0]), 6, 1, 2);
  %1 = "aten.amax"(%x) {dim = array<i64: -1>, keepdim = true} : (tensor<?x4x6xf32>) -> tensor<?x4x1xf32>
  // CHECK: dynoc_k::reduce({{.*}}, a0, 1, (24 * in[0][0]), 1, 1);
  %2 = "aten.mean"(%x) : (tensor<?x4x6xf32>) -> tensor<f32>
  return %0, %1, %2 : tensor<?x6xf32>, tensor<?x4x1xf32>, tensor<f32>
}
