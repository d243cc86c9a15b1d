// An op that is not an ATen overload is rejected where it stands.

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = aten.frobnicate %x : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
