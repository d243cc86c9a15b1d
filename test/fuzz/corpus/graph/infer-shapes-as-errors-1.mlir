
func.func @graph_1(%x: tensor<2x3xf32>, %y: tensor<7xf32>) -> tensor<7xf32> attributes {dynoc.inputs = [{kind = "user", name = "x"}, {kind = "user", name = "y"}]} {
  %0 = "aten.view_as"(%x, %y) : (tensor<2x3xf32>, tensor<7xf32>) -> tensor<7xf32>
  return %0 : tensor<7xf32>
}
