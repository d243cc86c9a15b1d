// An op the CPU backend cannot compile yet is an error at its location.

func.func @graph_0(%x: tensor<4x8xf32>) -> tensor<4x8xf32> attributes {dynoc.inputs = [{kind = "user", name = "L['x']"}]} {
  %0 = "aten.erfinv"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // Every unsupported op of the graph is reported, not only the first.
  %1:2 = "aten.cummax"(%0) {dim = 1 : i64} : (tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xi64>)
  return %1#0 : tensor<4x8xf32>
}
