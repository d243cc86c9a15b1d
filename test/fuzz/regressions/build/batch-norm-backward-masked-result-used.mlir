// x^)); dw = sum(g * x^); the
// masked-out bias gradient is not computed.
func.func @batch_norm_backward(%g: tensor<8x3xf32>, %x: tensor<8x3xf32>, %w: tensor<3xf32>, %m: tensor<3xf32>, %s: tensor<3xf32>) -> (tensor<8x3xf32>, tensor<3xf32>) {
  %0:3 = "aten.native_batch_norm_backward"(%g, %x, %w, %m, %s) {train = true, eps = 1.0e-05 : f64, output_mask = array<i1: true,false, false>, operand_segment_sizes = array<i32: 1, 1, 1, 0, 0, 1, 1>} : (tensor<8x3xf32>, tensor<8x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<8x3xf32>, tensor<3xf32>, tensor<0xui8>)
  return %0#0, %0#1 : tensor<8x3xf32>, tensor<3xf32>
}
