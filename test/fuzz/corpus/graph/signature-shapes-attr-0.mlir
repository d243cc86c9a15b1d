// dynoc.shapes (set by dynoc-infer-shapes) must hold one symbol-only affine map
// per result, of the result's rank; dynoc.dim_symbols is an array of strings.

func.func @rank(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %0 = aten.relu %x {dynoc.shapes = [affine_map<()[s0] -> (s0)>]} : (tensor<?x4xf32>) -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}
