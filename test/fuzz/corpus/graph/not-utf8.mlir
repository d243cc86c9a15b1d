// relu(x @ w^T + b) + y with a dynamic batch dim: the runtime resolves it from
// the inputs. Used by the runtime tests, the serving example and the bench.
module attributes {dynoc.version = 1 : i64} {
  func.func @dyn_mlp(%x: tensor<?x16xf32>, %y: tensor<?x8xf32>, %w: tensor<8x16xf32>, %b: tensor<8xf32>) -> tensor<?x8xf32> attributes {
      dynoc.entry = "test/models/dyn_mlp.mlir:1:dyn_mlp",
      dynoc.inputs = [{kind = "user", name = "ÿþx"}, {kind = "user", name = "y"}, {kind = "parameter", name = "fc.weight"}, {kind = "parameter", name = "fc.bias"}],
      dynoc.outputs = "{\"type\": \"tensor\", \"graph\": \"dyn_mlp\", \"index\": 0}",
      dynoc.guards = [
        {kind = "tensor_match", text = "check_tensor(L['x'], torch.float32, device='cpu', requires_grad=False, size=[None, 16], stride=[16, 1])", input = 0 : i64, dtype = f32, sizes = array<i64: -1, 16>, strides = array<i64: 16, 1>, requires_grad = false, device = "cpu"},
        {kind = "tensor_match", text = "check_tensor(L['y'], torch.float32, device='cpu', requires_grad=False, size=[None, 8], stride=[8, 1])", input = 1 : i64, dtype = f32, sizes = array<i64: -1, 8>, strides = array<i64: 8, 1>, requires_grad = false, device = "cpu"}],
      dynoc.weights = "dyn_mlp.safetensors"} {
    %wt = "aten.t"(%w) : (tensor<8x16xf32>) -> tensor<16x8xf32>
    %h = "aten.addmm"(%b, %x, %wt) : (tensor<8xf32>, tensor<?x16xf32>, tensor<16x8xf32>) -> tensor<?x8xf32>
    %r = "aten.relu"(%h) : (tensor<?x8xf32>) -> tensor<?x8xf32>
    %o = "aten.add.Tensor"(%r, %y) : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
    return %o : tensor<?x8xf32>
  }
}
