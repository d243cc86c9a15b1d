// dynoc.sym_sizes: capture writes a reshape's or expand's size entries that
// depend on several dynamic input dims as an affine map of those dims (the
// symbols: dynamic input dims in argument order); the attribute holds -1
// there. Shape inference and the CPU code read them.

// SHAPES-DAG: #[[BT:.*]] = affine_map<()[s0, s1] -> (s0, s1, 6)>
// SHAPES: aten.view {{.*}}dynoc.shapes = [#[[BT]]]
// SHAPES-SAME: -> tensor<?x?x6xf32>
func.func @graph_0(%x: tensor<?x?x4xf32>, %w: tensor<4x6xf32>) -> tensor<?x?x6xf32> attributes {dynoc.inputs = [{kind = "user", name = "L['x']"}, {kind = "parameter", name = "w"}]} {
  %0 = aten.view %x {size = array<i64: -1, 4>} : (tensor<?x?x4xf32>) -> tensor<?x4xf32>
  %1 = aten.mm %0, %w : (tensor<?x4xf32>, tensor<4x6xf32>) -> tensor<?x6xf32>
  %2 = aten.view %1 {size = array<i64: -1, -1, 6>, dynoc.sym_sizes = {size = affine_map<()[s0, s1] -> (s0, s1, 6)>}} : (tensor<?x6xf32>) -> tensor<?x?x6xf32>
  %3 = aten.expand %2 {size = array<i64: -1, -1, 6>, dynoc.sym_sizes = {size = affine_map<()[s0, s1] -> (s0, s1, 6)>}} : (tensor<?x?x6xf32>) -> tensor<?x?x6xf32>
  return %3 : tensor<?x?x6xf32>
}
