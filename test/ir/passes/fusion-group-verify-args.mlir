// The verifier of dynoc.fusion_group: body arguments match the inputs.
// RUN: dynoc opt %s --verify-diagnostics

func.func @bad_args(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{has 1 inputs but its body takes 2 arguments}}
  %0 = dynoc.fusion_group "elementwise"(%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>, %b: tensor<4xf32>):
    dynoc.yield %a : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}
