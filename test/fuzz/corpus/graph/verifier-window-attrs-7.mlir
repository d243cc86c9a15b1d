
// Memory strides are not a window's: as_strided's may be 0 (a broadcast).
func.func @as_strided_zero(%x: tensor<4xf32>) -> tensor<3x4xf32> {
  %0 = "aten.as_strided"(%x) {size = array<i64: 3, 4>, stride = array<i64: 0, 1>} : (tensor<4xf32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}
