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
