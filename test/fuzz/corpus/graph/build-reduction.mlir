// Reductions view their input as (outer, n, inner) over one run of adjacent
// dims; a dynamic outer dim stays symbolic; dims that are not adjacent are
// split into runs by dynoc-decompose when the shape is static
// (passes/decompose-split-reduction.mlir) and an error at the op otherwise.

func.func @graph_0(%x: tensor<?x4x6xf32>) -> (tensor<?x6xf32>, tensor<?x4x1xf32>, tensor<f32>) attributes {dynoc.inputs = [{kind = "user", name = "x"}]} {
  %0 = "aten.sum.dim_IntList"(%x) {dim = array<i64: 1>} : (tensor<?x4x6xf32>) -> tensor<?x6xf32>
  %1 = "aten.amax"(%x) {dim = array<i64: -1>, keepdim = true} : (tensor<?x4x6xf32>) -> tensor<?x4x1xf32>
  %2 = "aten.mean"(%x) : (tensor<?x4x6xf32>) -> tensor<f32>
  return %0, %1, %2 : tensor<?x6xf32>, tensor<?x4x1xf32>, tensor<f32>
}
