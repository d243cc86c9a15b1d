// The update after train_backward.mlir: SGD with lr 0.1 on fc.bias, written
// back (a mutation of the weight), from the backward's gradient.
module attributes {dynoc.version = 1 : i64} {
  func.func @graph_2(%gb: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<8xf32> attributes {
      dynoc.entry = "test/models/train_forward.mlir:1:step",
      dynoc.inputs = [{kind = "user", name = "graph_1.output_0"}, {kind = "parameter", name = "fc.bias"}],
      dynoc.outputs = "{\"type\": \"intermediate\"}",
      dynoc.mutations = "[{\"input\": \"fc.bias\", \"output\": 0}]",
      dynoc.weights = "dyn_mlp.safetensors"} {
    %s = "aten.mul.Scalar"(%gb) {other = 0.1 : f64} : (tensor<8xf32>) -> tensor<8xf32>
    %n = "aten.sub.Tensor"(%b, %s) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
    return %n : tensor<8xf32>
  }
}
