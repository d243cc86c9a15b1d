// dynoc.kind names the kind of graph; "backward" is the only value besides
// its absence (a forward graph).
// RUN: not dynoc opt %s 2>&1 | FileCheck %s
// CHECK: 'dynoc.kind' must be "backward"
func.func @graph_1(%g: tensor<4xf32>) -> tensor<4xf32> attributes {dynoc.inputs = [{kind = "user", name = "grad(graph_0.output_0)"}], dynoc.kind = "sideways"} {
  return %g : tensor<4xf32>
}
