// expand_as and view_as refuse static shapes they cannot take.
// RUN: dynoc opt %s --pass=dynoc-infer-shapes --split-input-file --verify-diagnostics

func.func @graph_0(%x: tensor<2x3xf32>, %y: tensor<4x3xf32>) -> tensor<4x3xf32> attributes {dynoc.inputs = [{kind = "user", name = "x"}, {kind = "user", name = "y"}]} {
  // expected-error @+1 {{dim 0 of size 2 cannot expand to 4}}
  %0 = "aten.expand_as"(%x, %y) : (tensor<2x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

func.func @graph_1(%x: tensor<2x3xf32>, %y: tensor<7xf32>) -> tensor<7xf32> attributes {dynoc.inputs = [{kind = "user", name = "x"}, {kind = "user", name = "y"}]} {
  // expected-error @+1 {{6 elements do not fit the shape of 7 elements}}
  %0 = "aten.view_as"(%x, %y) : (tensor<2x3xf32>, tensor<7xf32>) -> tensor<7xf32>
  return %0 : tensor<7xf32>
}
