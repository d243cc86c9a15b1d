// A graph file round-trips through `dynoc opt`, in custom and generic form.

module attributes {dynoc.version = 1 : i64} {
  func.func @graph_0(%x: tensor<4x16xf32>, %w: tensor<?x16xf32>, %y: tensor<4x16xf32>) -> (tensor<4x16xf32>, tensor<4x?xf32>) attributes {
      dynoc.entry = "model.py:3:forward",
      dynoc.inputs = [{kind = "user", name = "L['x']"}, {kind = "parameter", name = "w"}, {kind = "user", name = "L['y']"}],
      dynoc.outputs = "{\"type\": \"tuple\"}",
      dynoc.guards = [{kind = "tensor_match", text = "check_tensor(L['x'], ...)", input = 0 : i64, dtype = f32, sizes = array<i64: 4, 16>}],
      dynoc.weights = "weights.safetensors"} {
    %0 = aten.add.Tensor %x, %y {alpha = 2 : i64} : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
    %1 = "aten.gelu"(%0) {approximate = "tanh"} : (tensor<4x16xf32>) -> tensor<4x16xf32>
    %2 = aten.t %w : (tensor<?x16xf32>) -> tensor<16x?xf32>
    %3 = aten.mm %1, %2 : (tensor<4x16xf32>, tensor<16x?xf32>) -> tensor<4x?xf32>
    %4 = "aten.sum.dim_IntList"(%3) {dim = array<i64: 1>, keepdim = true} : (tensor<4x?xf32>) -> tensor<4x1xf32>
    %5 = "aten.cat"(%x, %y) {dim = 0 : i64} : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<8x16xf32>
    %c = "aten.convolution"(%x, %y) {stride = array<i64: 1>, padding = array<i64: 0>, dilation = array<i64: 1>, transposed = false, output_padding = array<i64: 0>, groups = 1 : i64, operand_segment_sizes = array<i32: 1, 1, 0>} : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x1xf32>
    %6 = "aten.to.dtype"(%x) {dtype = bf16} : (tensor<4x16xf32>) -> tensor<4x16xbf16>
    return %0, %3 : tensor<4x16xf32>, tensor<4x?xf32>
  }
}
