// The dynoc dialect verifies a graph file's signature attributes.

func.func @count(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> attributes {dynoc.inputs = [{kind = "user", name = "L['x']"}]} {
  return %x : tensor<4xf32>
}
