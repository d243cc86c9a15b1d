// expand_as and view_as (capture writes them when Python spelled a size as
// another tensor's dims, so that several dims stay dynamic): the result takes
// the other operand's dims; expand_as checks at run time that each expanded
// dim is 1 or already the target's size, view_as that the element counts agree.

// SHAPES-DAG: #[[IDS:.*]] = affine_map<()[s0, s1, s2, s3, s4, s5, s6] -> (s0, s1)>
// SHAPES-DAG: #[[Y:.*]] = affine_map<()[s0, s1, s2, s3, s4, s5, s6] -> (s5, s6, 2, 2)>
// SHAPES: aten.expand_as {{.*}} {dynoc.shapes = [#[[IDS]]]}
// SHAPES: aten.view_as {{.*}} {dynoc.shapes = [#[[Y]]]}
func.func @graph_0(%ids: tensor<?x?xi64>, %t: tensor<1x?xi64>, %x: tensor<?x?x4xf32>, %y: tensor<?x?x2x2xf32>) -> (tensor<?x?xi64>, tensor<?x?x2x2xf32>) attributes {dynoc.inputs = [{kind = "user", name = "L['ids']"}, {kind = "user", name = "L['t']"}, {kind = "user", name = "L['x']"}, {kind = "user", name = "L['y']"}]} {
  %0 = "aten.expand_as"(%t, %ids) : (tensor<1x?xi64>, tensor<?x?xi64>) -> tensor<?x?xi64>
  %1 = "aten.view_as"(%x, %y) : (tensor<?x?x4xf32>, tensor<?x?x2x2xf32>) -> tensor<?x?x2x2xf32>
  %2 = aten.relu %1 : (tensor<?x?x2x2xf32>) -> tensor<?x?x2x2xf32>
  return %0, %2 : tensor<?x?xi64>, tensor<?x?x2x2xf32>
}
