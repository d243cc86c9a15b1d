// The dynoc dialect verifies a graph file's signature attributes.
// RUN: dynoc opt %s --verify-diagnostics

// expected-error @+1 {{unknown attribute 'dynoc.colour'}}
func.func @unknown(%x: tensor<4xf32>) -> tensor<4xf32> attributes {dynoc.colour = "red"} {
  return %x : tensor<4xf32>
}
