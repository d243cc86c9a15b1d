// dynoc-infer-shapes: a result type its operands contradict is an error at
// the op, naming what the operands give.

func.func @static_dim(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> tensor<2x5xf32> {
  %0 = aten.mm %a, %b : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}
