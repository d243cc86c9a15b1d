// dynoc-infer-shapes: dynamic input dims become symbols; shape functions give
// each result its dims in them. A `?` the operands fix becomes static, the
// rest is recorded in dynoc.shapes, and the function lists what each symbol is.

// The convolution window (8 + 2 - 2 - 1) / 2 + 1 = 4, the cat along the dynamic
// dim s1 + 2, the view with -1 giving (s1 + 2) * 5 / 5, argmax dropping dim 1.
func.func @graph_0(%x: tensor<?x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>, %y: tensor<?x5xf32>, %z: tensor<2x5xf32>) -> (tensor<?x?x?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>, tensor<?xi64>) attributes {dynoc.inputs = [{kind = "user", name = "L['x']"}, {kind = "parameter", name = "w"}, {kind = "parameter", name = "b"}, {kind = "user", name = "L['y']"}, {kind = "user", name = "L['z']"}]} {
  %0 = "aten.convolution"(%x, %w, %b) {stride = array<i64: 2, 2>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, transposed = false, output_padding = array<i64: 0, 0>, groups = 1 : i64, operand_segment_sizes = array<i32: 1, 1, 1>} : (tensor<?x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<?x?x?x?xf32>
  %1 = "aten.cat"(%y, %z) {dim = 0 : i64} : (tensor<?x5xf32>, tensor<2x5xf32>) -> tensor<?x?xf32>
  %2 = aten.view %1 {size = array<i64: 5, -1>} : (tensor<?x?xf32>) -> tensor<?x?xf32>
  %3 = aten.argmax %y {dim = 1 : i64} : (tensor<?x5xf32>) -> tensor<?xi64>
  return %0, %1, %2, %3 : tensor<?x?x?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>, tensor<?xi64>
}

// Static graphs get no annotation; a `?` from an op without a shape function
// (a data-dependent size) becomes a fresh symbol named after it, and the dims
// computed from it follow it.
func.func @graph_1(%x: tensor<3x4xf32>) -> tensor<2x?xi64> attributes {dynoc.inputs = [{kind = "user", name = "L['x']"}]} {
  %0 = aten.relu %x : (tensor<3x4xf32>) -> tensor<3x4xf32>
  %1 = aten.nonzero %0 : (tensor<3x4xf32>) -> tensor<?x2xi64>
  %2 = aten.t %1 : (tensor<?x2xi64>) -> tensor<2x?xi64>
  return %2 : tensor<2x?xi64>
}
