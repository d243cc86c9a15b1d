// The dynoc dialect verifies a graph file's signature attributes.

func.func @guard(%x: tensor<4xf32>) -> tensor<4xf32> attributes {dynoc.guards = [{kind = "tensor_match", text = "t", input = 0 : i64, dtype = f32, sizes = array<i64: 4, 4>}]} {
  return %x : tensor<4xf32>
}
