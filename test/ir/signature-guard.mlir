// The dynoc dialect verifies a graph file's signature attributes.
// RUN: dynoc opt %s --verify-diagnostics

// expected-error @+1 {{guard 0 does not agree with the type of argument 0}}
func.func @guard(%x: tensor<4xf32>) -> tensor<4xf32> attributes {dynoc.guards = [{kind = "tensor_match", text = "t", input = 0 : i64, dtype = f32, sizes = array<i64: 4, 4>}]} {
  return %x : tensor<4xf32>
}
