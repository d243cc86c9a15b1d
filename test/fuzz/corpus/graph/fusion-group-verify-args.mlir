// The verifier of dynoc.fusion_group: body arguments match the inputs.

func.func @bad_args(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = dynoc.fusion_group "elementwise"(%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>, %b: tensor<4xf32>):
    dynoc.yield %a : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}
