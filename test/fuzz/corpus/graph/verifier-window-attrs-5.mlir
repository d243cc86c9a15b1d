
func.func @pool_kernel0(%x: tensor<1x3x8x8xf32>) -> (tensor<1x3x?x?xf32>, tensor<1x3x?x?xi64>) {
  %0, %1 = "aten.max_pool2d_with_indices"(%x) {kernel_size = array<i64: 0, 2>, stride = array<i64>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, ceil_mode = false} : (tensor<1x3x8x8xf32>) -> (tensor<1x3x?x?xf32>, tensor<1x3x?x?xi64>)
  return %0, %1 : tensor<1x3x?x?xf32>, tensor<1x3x?x?xi64>
}
