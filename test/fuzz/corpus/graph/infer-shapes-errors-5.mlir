
func.func @dim_range(%a: tensor<2x3xf32>) -> tensor<2xf32> {
  %0 = aten.sum.dim_IntList %a {dim = array<i64: 2>} : (tensor<2x3xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
