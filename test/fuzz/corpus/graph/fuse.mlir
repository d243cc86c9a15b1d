// dynoc-fuse groups single-use elementwise chains, and a GEMM or convolution
// with the elementwise ops that consume it, into dynoc.fusion_group.

func.func @chain(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = aten.add.Tensor %x, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %1 = aten.relu %0 : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = aten.mul.Scalar %1 {other = 2.0 : f64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %2 : tensor<4x8xf32>
}

func.func @gemm_epilogue(%x: tensor<4x16xf32>, %w: tensor<8x16xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  // The transpose feeding the GEMM stays outside: the code generator folds it.
  %0 = aten.t %w : (tensor<8x16xf32>) -> tensor<16x8xf32>
  %1 = aten.addmm %b, %x, %0 : (tensor<8xf32>, tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
  %2 = aten.relu %1 : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %2 : tensor<4x8xf32>
}

func.func @conv_bn_relu(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %g: tensor<4xf32>, %b: tensor<4xf32>, %m: tensor<4xf32>, %v: tensor<4xf32>) -> tensor<1x4x6x6xf32> {
  %0 = "aten.convolution"(%x, %w) {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, transposed = false, output_padding = array<i64: 0, 0>, groups = 1 : i64} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  %1, %2, %3 = "aten.native_batch_norm"(%0, %g, %b, %m, %v) {training = false, momentum = 0.1 : f64, eps = 1.0e-05 : f64, operand_segment_sizes = array<i32: 1, 1, 1, 1, 1>} : (tensor<1x4x6x6xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<1x4x6x6xf32>, tensor<0xf32>, tensor<0xf32>)
  %4 = aten.relu %1 : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  return %4 : tensor<1x4x6x6xf32>
}

func.func @not_fused(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x1xf32>) {
  // A value with two users ends a chain; gelu stays alone (its own kernel is
  // vectorized); an op changing the shape is not elementwise.
  %0 = aten.relu %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = aten.neg %0 : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = aten.gelu %0 : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %3 = aten.view %x {size = array<i64: 32>} : (tensor<4x8xf32>) -> tensor<32xf32>
  %4 = "aten.sum.dim_IntList"(%1) {dim = array<i64: 1>, keepdim = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  return %1, %2, %4 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x1xf32>
}

func.func @two_chains_meet(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  // Both relus' only user is the add: it joins the first chain; the second
  // relu's group is alone and so not made.
  %a = aten.relu %x : (tensor<4xf32>) -> tensor<4xf32>
  %b = aten.relu %y : (tensor<4xf32>) -> tensor<4xf32>
  %c = aten.add.Tensor %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %d = aten.neg %c : (tensor<4xf32>) -> tensor<4xf32>
  return %d : tensor<4xf32>
}
