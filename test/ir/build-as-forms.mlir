// expand_as and view_as (capture writes them when Python spelled a size as
// another tensor's dims, so that several dims stay dynamic): the result takes
// the other operand's dims; expand_as checks at run time that each expanded
// dim is 1 or already the target's size, view_as that the element counts agree.
// RUN: dynoc build -O0 %s -o %t.cpp --emit=cpp 2>%t.log && FileCheck %s < %t.cpp
// RUN: dynoc opt %s --pass=dynoc-infer-shapes | FileCheck %s --check-prefix=SHAPES

// SHAPES-DAG: #[[IDS:.*]] = affine_map<()[s0, s1, s2, s3, s4, s5, s6] -> (s0, s1)>
// SHAPES-DAG: #[[Y:.*]] = affine_map<()[s0, s1, s2, s3, s4, s5, s6] -> (s5, s6, 2, 2)>
// SHAPES: aten.expand_as {{.*}} {dynoc.shapes = [#[[IDS]]]}
// SHAPES: aten.view_as {{.*}} {dynoc.shapes = [#[[Y]]]}
func.func @graph_0(%ids: tensor<?x?xi64>, %t: tensor<1x?xi64>, %x: tensor<?x?x4xf32>, %y: tensor<?x?x2x2xf32>) -> (tensor<?x?xi64>, tensor<?x?x2x2xf32>) attributes {dynoc.inputs = [{kind = "user", name = "L['ids']"}, {kind = "user", name = "L['t']"}, {kind = "user", name = "L['x']"}, {kind = "user", name = "L['y']"}]} {
  // CHECK-LABEL: static const char *dynoc_graph_0_resolve(
  // CHECK: if (!((in[1][1] == 1 || in[1][1] == in[0][1])))
  // CHECK-NEXT: return "aten.expand_as at loc({{.*}}): a dim of size other than 1 cannot expand";
  // CHECK: if (!((4 * in[2][0] * in[2][1]) == (4 * in[3][0] * in[3][1])))
  // CHECK-NEXT: return "aten.view_as at loc({{.*}}): the element count does not fit the new shape";
  // CHECK-LABEL: const char *dynoc_graph_0_shapes(
  // CHECK: out[0][0] = in[0][0];
  // CHECK-NEXT: out[0][1] = in[0][1];
  // CHECK-NEXT: out[1][0] = in[3][0];
  // CHECK-NEXT: out[1][1] = in[3][1];
  // CHECK-NEXT: out[1][2] = 2;
  // CHECK-LABEL: int dynoc_graph_0_run(
  // CHECK: s[] = {0, (in[1][1] == 1 ? 0 : 1)}, shape[] = {in[0][0], in[0][1]};
  // CHECK-NEXT: dynoc_k::broadcast_copy(
  // CHECK: dynoc_k::unary(v2, a2, (4 * in[3][0] * in[3][1]),
  %0 = "aten.expand_as"(%t, %ids) : (tensor<1x?xi64>, tensor<?x?xi64>) -> tensor<?x?xi64>
  %1 = "aten.view_as"(%x, %y) : (tensor<?x?x4xf32>, tensor<?x?x2x2xf32>) -> tensor<?x?x2x2xf32>
  %2 = aten.relu %1 : (tensor<?x?x2x2xf32>) -> tensor<?x?x2x2xf32>
  return %0, %2 : tensor<?x?xi64>, tensor<?x?x2x2xf32>
}
