// RUN: dynoc opt %s --verify-diagnostics

func.func @too_few(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{expected 2 operands, but found 1}}
  %0 = "aten.mul.Tensor"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
