
func.func @rank(%a: tensor<2x3xf32>) -> tensor<6xf32> {
  %0 = aten.t %a : (tensor<2x3xf32>) -> tensor<6xf32>
  return %0 : tensor<6xf32>
}
