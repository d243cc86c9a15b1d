// The dynoc dialect verifies a graph file's signature attributes.

func.func @unknown(%x: tensor<4xf32>) -> tensor<4xf32> attributes {dynoc.colour = "red"} {
  return %x : tensor<4xf32>
}
