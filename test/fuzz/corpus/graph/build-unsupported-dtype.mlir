
func.func @graph_0(%x: tensor<4xi16>) -> tensor<4xi16> attributes {dynoc.inputs = [{kind = "user", name = "L['x']"}]} {
  %0 = aten.relu %x : (tensor<4xi16>) -> tensor<4xi16>
  return %0 : tensor<4xi16>
}
