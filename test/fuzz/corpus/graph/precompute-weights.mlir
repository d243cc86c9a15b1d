// dynoc-precompute-weights: ops on weights alone move into @<graph>__prepare,
// which the runtime runs once at load; the graph reads their results as
// "prepared" arguments. Layout ops on a weight itself stay.

func.func @graph_0(%x: tensor<2x4xf32>, %w: tensor<3x4xf32>, %s: tensor<3xf32>) -> tensor<2x3xf32> attributes {dynoc.inputs = [{kind = "user", name = "L['x']"}, {kind = "parameter", name = "w"}, {kind = "parameter", name = "scale"}]} {
  %t = aten.t %w : (tensor<3x4xf32>) -> tensor<4x3xf32>
  %a = aten.mul.Scalar %s {other = 2.0 : f64} : (tensor<3xf32>) -> tensor<3xf32>
  %y = aten.mm %x, %t : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  %b = aten.exp %a : (tensor<3xf32>) -> tensor<3xf32>
  %z = aten.mul.Tensor %y, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %z : tensor<2x3xf32>
}

// Nothing reads only weights: the graph stays as it is, with no prepare function.
func.func @graph_1(%x: tensor<4xf32>) -> tensor<4xf32> attributes {dynoc.inputs = [{kind = "user", name = "L['x']"}]} {
  %0 = aten.relu %x : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// A buffer the graph changes in place (a counter, running statistics) is not
// constant: the op on it stays in the graph.
func.func @graph_2(%x: tensor<3xf32>, %count: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) attributes {dynoc.inputs = [{kind = "user", name = "L['x']"}, {kind = "buffer", name = "count"}], dynoc.mutations = "[{\"input\": \"count\", \"output\": 0}]"} {
  %c = aten.add.Scalar %count {other = 1.0 : f64, alpha = 1.0 : f64} : (tensor<3xf32>) -> tensor<3xf32>
  %y = aten.add.Tensor %x, %c : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %c, %y : tensor<3xf32>, tensor<3xf32>
}
