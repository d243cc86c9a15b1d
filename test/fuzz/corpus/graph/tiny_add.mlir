// x + y on 4 floats: a graph whose kernel costs next to nothing, for measuring
// the runtime's per-call overhead (bench/runtime_overhead.py).
module attributes {dynoc.version = 1 : i64} {
  func.func @tiny_add(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> attributes {
      dynoc.entry = "test/models/tiny_add.mlir:1:tiny_add",
      dynoc.inputs = [{kind = "user", name = "L['x']"}, {kind = "user", name = "L['y']"}],
      dynoc.outputs = "{\"type\": \"tensor\", \"graph\": \"tiny_add\", \"index\": 0}",
      dynoc.guards = [
        {kind = "tensor_match", text = "check_tensor(L['x'], torch.float32, device='cpu', requires_grad=False, size=[4], stride=[1])", input = 0 : i64, dtype = f32, sizes = array<i64: 4>, strides = array<i64: 1>, requires_grad = false, device = "cpu"},
        {kind = "tensor_match", text = "check_tensor(L['y'], torch.float32, device='cpu', requires_grad=False, size=[4], stride=[1])", input = 1 : i64, dtype = f32, sizes = array<i64: 4>, strides = array<i64: 1>, requires_grad = false, device = "cpu"},
        {kind = "global_state", text = "___is_grad_enabled() == False"}]} {
    %0 = "aten.add.Tensor"(%x, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}
