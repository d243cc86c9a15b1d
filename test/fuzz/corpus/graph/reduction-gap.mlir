func.func @graph_0(%x: tensor<?x3x4xf32>) -> tensor<3xf32> attributes {dynoc.inputs = [{kind = "user", name = "x"}]} {
  // GAP: reduction-gap.mlir:[[@LINE+1]]:8: error: dynoc build (cpu): 'aten.sum.dim_IntList' over dims that are not adjacent is not supported yet
  %0 = "aten.sum.dim_IntList"(%x) {dim = array<i64: 0, 2>} : (tensor<?x3x4xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
