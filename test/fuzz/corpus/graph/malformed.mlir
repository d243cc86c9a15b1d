// Malformed input gets a diagnostic at file:line:col.

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "aten.relu"(%x) (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
