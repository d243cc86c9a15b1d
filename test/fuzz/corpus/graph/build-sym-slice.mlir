// A slice whose end depends on a dynamic input dim (BERT's position ids,
// table[:, :t]) and a select along a dynamic dim (its pooler's x[:, 0]):
// ATen's clamping and the index check happen at run time.

// The clamped slice length is a fresh symbol (no affine expression says it).
// SHAPES: dynoc.dim_symbols = ["L['x'].size(0)", "L['x'].size(1)", "aten.slice.Tensor result 0 dim 1",
func.func @graph_0(%x: tensor<?x?xf32>, %table: tensor<1x64xf32>) -> (tensor<?x?xf32>, tensor<?xf32>) attributes {dynoc.inputs = [{kind = "user", name = "L['x']"}, {kind = "constant", name = "table"}]} {
  %0 = "aten.slice.Tensor"(%table) {dim = 1 : i64, start = 0 : i64, end = 16 : i64, dynoc.sym_sizes = {end = affine_map<()[s0, s1] -> (s1)>}} : (tensor<1x64xf32>) -> tensor<1x?xf32>
  %1 = aten.add.Tensor %x, %0 : (tensor<?x?xf32>, tensor<1x?xf32>) -> tensor<?x?xf32>
  %2 = "aten.select.int"(%1) {dim = 1 : i64, index = 0 : i64} : (tensor<?x?xf32>) -> tensor<?xf32>
  return %1, %2 : tensor<?x?xf32>, tensor<?xf32>
}
