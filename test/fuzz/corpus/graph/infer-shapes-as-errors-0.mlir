// expand_as and view_as refuse static shapes they cannot take.

func.func @graph_0(%x: tensor<2x3xf32>, %y: tensor<4x3xf32>) -> tensor<4x3xf32> attributes {dynoc.inputs = [{kind = "user", name = "x"}, {kind = "user", name = "y"}]} {
  %0 = "aten.expand_as"(%x, %y) : (tensor<2x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}
