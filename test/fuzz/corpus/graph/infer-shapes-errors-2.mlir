
func.func @no_broadcast(%a: tensor<?x3xf32>, %b: tensor<4xf32>) -> tensor<?x3xf32> {
  %0 = aten.add.Tensor %a, %b : (tensor<?x3xf32>, tensor<4xf32>) -> tensor<?x3xf32>
  return %0 : tensor<?x3xf32>
}
