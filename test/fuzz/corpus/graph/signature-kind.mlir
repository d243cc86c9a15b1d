// The dynoc dialect verifies a graph file's signature attributes.

func.func @kind(%x: tensor<4xf32>) -> tensor<4xf32> attributes {dynoc.inputs = [{kind = "weight", name = "w"}]} {
  return %x : tensor<4xf32>
}
