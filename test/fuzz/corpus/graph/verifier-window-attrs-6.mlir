
func.func @pool_pad(%x: tensor<1x3x8x8xf32>) -> (tensor<1x3x?x?xf32>, tensor<1x3x?x?xi64>) {
  %0, %1 = "aten.max_pool2d_with_indices"(%x) {kernel_size = array<i64: 3, 3>, stride = array<i64: 2, 2>, padding = array<i64: 2, 0>, dilation = array<i64: 1, 1>, ceil_mode = false} : (tensor<1x3x8x8xf32>) -> (tensor<1x3x?x?xf32>, tensor<1x3x?x?xi64>)
  return %0, %1 : tensor<1x3x?x?xf32>, tensor<1x3x?x?xi64>
}
