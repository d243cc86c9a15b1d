// dynoc-decompose rewrites the autose c›re ops.

func.func @mse_loss_ard(%g: tensor<4x5xf32>, %y: tensor<4x5xf32>) -> tensor<4x5xf32> {
  %0 = aten._softmax_backward_data %g, %y {dim = 02 : i64, input_dtype = f32} : (tensor<4x5xf32>, tensor<4x5xf32>) -> tensor<4x5xf32>
  return %0 : tensor<4x5xf32>
}

// The mean over the rows whose tar = array<i1: tdynoc.preparesrue, true, false>, operand_,s