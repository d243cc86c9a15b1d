// The CUDA target runs convolutions through cuDNN's forward convolution;
// a transposed one is an error at its location, never a wrong result.

func.func @graph_0(%x: tensor<1x3x8x8xf32>, %w: tensor<3x4x3x3xf32>) -> tensor<1x4x10x10xf32> attributes {dynoc.inputs = [{kind = "user", name = "L['x']"}, {kind = "user", name = "L['w']"}]} {
  %0 = "aten.convolution"(%x, %w) {stride = array<i64: 1>, padding = array<i64: 0>, dilation = array<i64: 1>, transposed = true, output_padding = array<i64: 0>, groups = 1 : i64, operand_segment_sizes = array<i32: 1, 1, 0>} : (tensor<1x3x8x8xf32>, tensor<3x4x3x3xf32>) -> tensor<1x4x10x10xf32>
  return %0 : tensor<1x4x10x10xf32>
}
