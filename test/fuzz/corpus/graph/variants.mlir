// Two variants of one entry, as recompiles make them: the runtime runs the
// first whose guards pass.
module attributes {dynoc.version = 1 : i64} {
  func.func @double_rows4(%x: tensor<4x3xf32>) -> tensor<4x3xf32> attributes {
      dynoc.entry = "test/models/variants.mlir:1:f",
      dynoc.inputs = [{kind = "user", name = "x"}],
      dynoc.outputs = "{\"type\": \"tensor\", \"graph\": \"double_rows4\", \"index\": 0}",
      dynoc.guards = [{kind = "tensor_match", text = "check_tensor(L['x'], torch.float32, device='cpu', requires_grad=False, size=[4, 3], stride=[3, 1])", input = 0 : i64, dtype = f32, sizes = array<i64: 4, 3>, strides = array<i64: 3, 1>, requires_grad = false, device = "cpu"}]} {
    %0 = "aten.mul.Scalar"(%x) {other = 2.0 : f64} : (tensor<4x3xf32>) -> tensor<4x3xf32>
    return %0 : tensor<4x3xf32>
  }
  func.func @triple_rows2(%x: tensor<2x3xf32>) -> tensor<2x3xf32> attributes {
      dynoc.entry = "test/models/variants.mlir:1:f",
      dynoc.inputs = [{kind = "user", name = "x"}],
      dynoc.outputs = "{\"type\": \"tensor\", \"graph\": \"triple_rows2\", \"index\": 0}",
      dynoc.guards = [{kind = "tensor_match", text = "check_tensor(L['x'], torch.float32, device='cpu', requires_grad=False, size=[2, 3], stride=[3, 1])", input = 0 : i64, dtype = f32, sizes = array<i64: 2, 3>, strides = array<i64: 3, 1>, requires_grad = false, device = "cpu"}]} {
    %0 = "aten.mul.Scalar"(%x) {other = 3.0 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
    return %0 : tensor<2x3xf32>
  }
}
