// The backward of train_forward.mlir: d(loss)/d(fc.bias) = sum over rows of
// 2 * g * d * x, from the gradient seed g, the saved d and the input x.
module attributes {dynoc.version = 1 : i64} {
  func.func @graph_1(%g: tensor<f32>, %d: tensor<4x8xf32>, %x: tensor<4x8xf32>) -> tensor<8xf32> attributes {
      dynoc.entry = "test/models/train_forward.mlir:1:step",
      dynoc.kind = "backward",
      dynoc.grads = "[{\"input\": \"fc.bias\", \"output\": 0}]",
      dynoc.inputs = [{kind = "user", name = "grad(graph_0.output_0)"}, {kind = "user", name = "graph_0.output_1"}, {kind = "user", name = "L['x']"}],
      dynoc.outputs = "{\"type\": \"intermediate\"}"} {
    %dx = "aten.mul.Tensor"(%d, %x) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %gdx = "aten.mul.Tensor"(%dx, %g) : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
    %two = "aten.mul.Scalar"(%gdx) {other = 2.0 : f64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
    %gb = "aten.sum.dim_IntList"(%two) {dim = array<i64: 0>, keepdim = false} : (tensor<4x8xf32>) -> tensor<8xf32>
    return %gb : tensor<8xf32>
  }
}
