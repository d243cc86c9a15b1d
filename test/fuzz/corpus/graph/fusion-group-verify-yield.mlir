// The verifier of dynoc.fusion_group: the yield matches the result.

func.func @bad_yield(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = dynoc.fusion_group "elementwise"(%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %1 = aten.view %a {size = array<i64: 2, 2>} : (tensor<4xf32>) -> tensor<2x2xf32>
    dynoc.yield %1 : tensor<2x2xf32>
  }
  return %0 : tensor<4xf32>
}
