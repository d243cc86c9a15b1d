
func.func @view(%a: tensor<2x3xf32>) -> tensor<4x?xf32> {
  %0 = aten.view %a {size = array<i64: 4, -1>} : (tensor<2x3xf32>) -> tensor<4x?xf32>
  return %0 : tensor<4x?xf32>
}
