// dynoc.kind names the kind of graph; "backward" is the only value besides
// its absence (a forward graph).
func.func @graph_1(%g: tensor<4xf32>) -> tensor<4xf32> attributes {dynoc.inputs = [{kind = "user", name = "grad(graph_0.output_0)"}], dynoc.kind = "sideways"} {
  return %g : tensor<4xf32>
}
