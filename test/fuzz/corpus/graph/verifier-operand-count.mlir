
func.func @too_few(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "aten.mul.Tensor"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
