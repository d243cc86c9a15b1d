// dynoc.sym_sizes must give one size per entry of the attribute it names.
func.func @graph_0(%x: tensor<?x6xf32>) -> tensor<?x?x6xf32> attributes {dynoc.inputs = [{kind = "user", name = "L['x']"}]} {
  %0 = aten.view %x {size = array<i64: -1, -1, 6>, dynoc.sym_sizes = {size = affine_map<()[s0] -> (s0, 6)>}} : (tensor<?x6xf32>) -> tensor<?x?x6xf32>
  return %0 : tensor<?x?x6xf32>
}
