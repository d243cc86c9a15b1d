func.func @graph_0(%g: tensor<5x4xf32>, %i: tensor<5xi64>) -> tensor<11x4xf32> attributes {dynoc.inputs = [{kind = "user", name = "L['g']"}, {kind = "user", name = "L['i']"}]} {
  %0 = aten.embedding_dense_backward %g, %i {num_weights = 11 : i64, padding_idx = -1 : i64, scale_grad_by_freq = true} : (tensor<5x4xf32>, tensor<5xi64>) -> tensor<11x4xf32>
  return %0 : tensor<11x4xf32>
}
