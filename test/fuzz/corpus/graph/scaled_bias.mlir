// x * (fc.bias * 2): the product of weights alone moves to load time
// (dynoc-precompute-weights), so a test can check that writing fc.bias
// recomputes it. Shares dyn_mlp's weights file.
module attributes {dynoc.version = 1 : i64} {
  func.func @scaled_bias(%x: tensor<?x8xf32>, %b: tensor<8xf32>) -> tensor<?x8xf32> attributes {
      dynoc.entry = "test/models/scaled_bias.mlir:1:scaled_bias",
      dynoc.inputs = [{kind = "user", name = "x"}, {kind = "parameter", name = "fc.bias"}],
      dynoc.outputs = "{\"type\": \"tensor\", \"graph\": \"scaled_bias\", \"index\": 0}",
      dynoc.guards = [
        {kind = "tensor_match", text = "check_tensor(L['x'], torch.float32, device='cpu', requires_grad=False, size=[None, 8], stride=[8, 1])", input = 0 : i64, dtype = f32, sizes = array<i64: -1, 8>, strides = array<i64: 8, 1>, requires_grad = false, device = "cpu"}],
      dynoc.weights = "dyn_mlp.safetensors"} {
    %s = "aten.mul.Scalar"(%b) {other = 2.0 : f64} : (tensor<8xf32>) -> tensor<8xf32>
    %o = "aten.mul.Tensor"(%x, %s) : (tensor<?x8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
    return %o : tensor<?x8xf32>
  }
}
