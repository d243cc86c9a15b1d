// dynoc-decompose splits mean.dim and sum.dim_IntList over dims that are not
// adjacent into one reduction per run of adjacent dims (the code generators
// reduce adjacent dims only); reductions over adjacent dims stay as they are.

func.func @mean_batch_and_spatial(%x: tensor<2x4x6x6xf32>) -> tensor<4xf32> {
  %0 = aten.mean.dim %x {dim = array<i64: 0, 2, 3>} : (tensor<2x4x6x6xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

func.func @sum_keepdim(%x: tensor<3x5x7xf32>) -> tensor<1x5x1xf32> {
  %0 = aten.sum.dim_IntList %x {dim = array<i64: -1, 0>, keepdim = true} : (tensor<3x5x7xf32>) -> tensor<1x5x1xf32>
  return %0 : tensor<1x5x1xf32>
}

func.func @adjacent_stays(%x: tensor<3x5x7xf32>) -> tensor<3xf32> {
  %0 = aten.mean.dim %x {dim = array<i64: 1, 2>} : (tensor<3x5x7xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
