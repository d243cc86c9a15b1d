// A window's attributes are checked when the op is verified, in ATen's words,
// before shape code divides by them (a 0 stride was a SIGFPE in dynoc build).
// BUILD: error: 'aten.convolution' op non-positive stride is not supported (stride[0] = 0)

func.func @stride0(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x?x?xf32> {
  %0 = "aten.convolution"(%x, %w) {stride = array<i64: 0, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, transposed = false, output_padding = array<i64: 0, 0>, groups = 1 : i64} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x?x?xf32>
  return %0 : tensor<1x4x?x?xf32>
}
