// An arange whose end depends on a dynamic input dim (GPT-2's positions):
// capture keeps the captured end in the attribute and gives the expression in
// dynoc.sym_sizes; the length is computed from the input dims at run time.

// SHAPES: #[[T:.*]] = affine_map<()[s0, s1] -> (s1)>
// SHAPES: aten.arange {dynoc.shapes = [#[[T]]]
func.func @graph_0(%ids: tensor<?x?xi64>) -> tensor<?xi64> attributes {dynoc.inputs = [{kind = "user", name = "L['ids']"}]} {
  %0 = "aten.arange"() {end = 16 : i64, dynoc.sym_sizes = {end = affine_map<()[s0, s1] -> (s1)>}} : () -> tensor<?xi64>
  return %0 : tensor<?xi64>
}
