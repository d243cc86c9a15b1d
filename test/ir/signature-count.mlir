// The dynoc dialect verifies a graph file's signature attributes.
// RUN: dynoc opt %s --verify-diagnostics

// expected-error @+1 {{'dynoc.inputs' describes 1 inputs but the function has 2 arguments}}
func.func @count(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> attributes {dynoc.inputs = [{kind = "user", name = "L['x']"}]} {
  return %x : tensor<4xf32>
}
