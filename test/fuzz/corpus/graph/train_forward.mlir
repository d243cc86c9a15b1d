// A training capture in miniature, built as one bundled model with
// train_backward.mlir and train_update.mlir (test/unit/FunctionsTest.cpp):
// loss = sum((x * fc.bias - t)^2), saving d = x * fc.bias - t for the
// backward. Shares dyn_mlp's weights file.
module attributes {dynoc.version = 1 : i64} {
  func.func @graph_0(%x: tensor<4x8xf32>, %t: tensor<4x8xf32>, %b: tensor<8xf32>) -> (tensor<f32>, tensor<4x8xf32>) attributes {
      dynoc.entry = "test/models/train_forward.mlir:1:step",
      dynoc.inputs = [{kind = "user", name = "L['x']"}, {kind = "user", name = "L['t']"}, {kind = "parameter", name = "fc.bias"}],
      dynoc.outputs = "{\"type\": \"intermediate\"}",
      dynoc.weights = "dyn_mlp.safetensors"} {
    %y = "aten.mul.Tensor"(%x, %b) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
    %d = "aten.sub.Tensor"(%y, %t) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %sq = "aten.mul.Tensor"(%d, %d) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %loss = "aten.sum"(%sq) : (tensor<4x8xf32>) -> tensor<f32>
    return %loss, %d : tensor<f32>, tensor<4x8xf32>
  }
}
