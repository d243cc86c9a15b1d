// dynoc-infer-shapes: a result type its operands contradict is an error at
// the op, naming what the operands give.
// RUN: dynoc opt %s --pass=dynoc-infer-shapes --verify-diagnostics --split-input-file

func.func @static_dim(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> tensor<2x5xf32> {
  // expected-error @+1 {{result 0 has type tensor<2x5xf32>, but its operands give shape [2, 4]}}
  %0 = aten.mm %a, %b : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}

// -----

func.func @contraction(%a: tensor<2x3xf32>, %b: tensor<4x4xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{the contracted dims differ: 3 vs 4}}
  %0 = aten.mm %a, %b : (tensor<2x3xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @no_broadcast(%a: tensor<?x3xf32>, %b: tensor<4xf32>) -> tensor<?x3xf32> {
  // expected-error @+1 {{the operands do not broadcast: dim -1 is 3 and 4}}
  %0 = aten.add.Tensor %a, %b : (tensor<?x3xf32>, tensor<4xf32>) -> tensor<?x3xf32>
  return %0 : tensor<?x3xf32>
}

// -----

func.func @rank(%a: tensor<2x3xf32>) -> tensor<6xf32> {
  // expected-error @+1 {{result 0 has type tensor<6xf32>, but its operands give rank 2 [3, 2]}}
  %0 = aten.t %a : (tensor<2x3xf32>) -> tensor<6xf32>
  return %0 : tensor<6xf32>
}

// -----

func.func @view(%a: tensor<2x3xf32>) -> tensor<4x?xf32> {
  // expected-error @+1 {{6 elements do not fit the shape [4, -1]}}
  %0 = aten.view %a {size = array<i64: 4, -1>} : (tensor<2x3xf32>) -> tensor<4x?xf32>
  return %0 : tensor<4x?xf32>
}

// -----

func.func @dim_range(%a: tensor<2x3xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{dim 2 is out of range for rank 2}}
  %0 = aten.sum.dim_IntList %a {dim = array<i64: 2>} : (tensor<2x3xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @dtype(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{result 0 has type tensor<2x3xf32>, but its operands and attributes give element type i1}}
  %0 = aten.lt.Tensor %a, %b : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// A reduction's dims are checked against the operand's rank before any pass
// indexes the shape with them (found by the build fuzzer: dynoc-decompose
// read dim 5 of a rank-4 type).
func.func @var_dim_out_of_range(%x: tensor<8x3x2x2xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{dim 5 is out of range for rank 4}}
  %0 = aten.var.correction %x {dim = array<i64: 5, 2, 3>} : (tensor<8x3x2x2xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @var_keepdim(%x: tensor<8x3x2x2xf32>) -> tensor<1x3x1x1xf32> {
  // expected-error @+1 {{result 0 has type tensor<1x3x1x1xf32>, but its operands give shape [1, 3, 1, 2]}}
  %0 = aten.var.correction %x {dim = array<i64: 0, 2>, keepdim = true} : (tensor<8x3x2x2xf32>) -> tensor<1x3x1x1xf32>
  return %0 : tensor<1x3x1x1xf32>
}

// -----

func.func @softmax_backward_dim(%g: tensor<4x5xf32>, %y: tensor<4x5xf32>) -> tensor<4x5xf32> {
  // expected-error @+1 {{dim 2 is out of range for rank 2}}
  %0 = aten._softmax_backward_data %g, %y {dim = 2 : i64, input_dtype = f32} : (tensor<4x5xf32>, tensor<4x5xf32>) -> tensor<4x5xf32>
  return %0 : tensor<4x5xf32>
}

// -----

func.func @batch_norm_training_statistics(%x: tensor<2x4x3x3xf32>, %w: tensor<4xf32>, %b: tensor<4xf32>, %rm: tensor<4xf32>, %rv: tensor<4xf32>) -> (tensor<2x4x3x3xf32>, tensor<5xf32>) {
  // expected-error @+1 {{result 2 has type tensor<5xf32>, but its operands give shape [4]}}
  %0:3 = "aten.native_batch_norm"(%x, %w, %b, %rm, %rv) {training = true, momentum = 0.1 : f64, eps = 1.0e-05 : f64, operand_segment_sizes = array<i32: 1, 1, 1, 1, 1>} : (tensor<2x4x3x3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<2x4x3x3xf32>, tensor<4xf32>, tensor<5xf32>)
  return %0#0, %0#2 : tensor<2x4x3x3xf32>, tensor<5xf32>
}
