// The verifier of dynoc.fusion_group.

func.func @bad_kind(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = dynoc.fusion_group "loop"(%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %1 = aten.relu %a : (tensor<4xf32>) -> tensor<4xf32>
    dynoc.yield %1 : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}
