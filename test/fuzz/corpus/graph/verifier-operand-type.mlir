// The generated verifiers check operand types and counts.

func.func @wrong_type(%x: i64) -> tensor<4xf32> {
  %0 = "aten.relu"(%x) : (i64) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
