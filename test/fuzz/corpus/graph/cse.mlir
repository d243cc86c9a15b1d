// aten ops without side effects are Pure: CSE and DCE apply.

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = aten.relu %x : (tensor<4xf32>) -> tensor<4xf32>
  %1 = aten.relu %x : (tensor<4xf32>) -> tensor<4xf32>
  %2 = aten.exp %x : (tensor<4xf32>) -> tensor<4xf32>
  %3 = aten.add.Tensor %0, %1 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %3 : tensor<4xf32>
}
