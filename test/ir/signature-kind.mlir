// The dynoc dialect verifies a graph file's signature attributes.
// RUN: dynoc opt %s --verify-diagnostics

// expected-error @+1 {{input 0 has unknown kind 'weight' (expected user, parameter, buffer, constant or prepared)}}
func.func @kind(%x: tensor<4xf32>) -> tensor<4xf32> attributes {dynoc.inputs = [{kind = "weight", name = "w"}]} {
  return %x : tensor<4xf32>
}
