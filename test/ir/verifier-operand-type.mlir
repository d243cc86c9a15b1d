// The generated verifiers check operand types and counts.
// RUN: dynoc opt %s --verify-diagnostics

func.func @wrong_type(%x: i64) -> tensor<4xf32> {
  // expected-error @+1 {{operand #0 must be ranked tensor of any type values, but got 'i64'}}
  %0 = "aten.relu"(%x) : (i64) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
