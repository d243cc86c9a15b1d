
// f64 runs the elementwise ops and GEMMs but not the batched GEMM: the error
// names the op, its dtype and its place.
func.func @graph_0(%a: tensor<1x2x3xf64>, %b: tensor<1x3x4xf64>) -> tensor<1x2x4xf64> attributes {dynoc.inputs = [{kind = "user", name = "L['a']"}, {kind = "user", name = "L['b']"}]} {
  %0 = aten.bmm %a, %b : (tensor<1x2x3xf64>, tensor<1x3x4xf64>) -> tensor<1x2x4xf64>
  return %0 : tensor<1x2x4xf64>
}
