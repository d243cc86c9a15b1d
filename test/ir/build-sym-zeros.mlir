// A tensor factory whose size depends on dynamic input dims (T5's position
// bias, `torch.zeros(1, heads, q, key_length)` with the key length the
// cache's length + 1): the dynamic entries are -1 in the attribute and
// expressions of the input dims in dynoc.sym_sizes.
// RUN: dynoc opt %s --pass=dynoc-infer-shapes | FileCheck %s --check-prefix=SHAPES
// RUN: dynoc build -O0 %s -o %t.cpp --emit=cpp && FileCheck %s < %t.cpp

// SHAPES: #[[T:.*]] = affine_map<()[s0] -> (1, 4, 1, s0 + 1)>
// SHAPES: aten.zeros {dynoc.shapes = [#[[T]]]
func.func @graph_0(%keys: tensor<1x4x?x16xf32>) -> tensor<1x4x1x?xf32> attributes {dynoc.inputs = [{kind = "user", name = "L['keys']"}]} {
  // CHECK: dynoc_k::arange({{.*}}, (4 * (in[0][2] + 1)), 0.0
  %0 = "aten.zeros"() {size = array<i64: 1, 4, 1, -1>, dynoc.sym_sizes = {size = affine_map<()[s0] -> (1, 4, 1, s0 + 1)>}} : () -> tensor<1x4x1x?xf32>
  return %0 : tensor<1x4x1x?xf32>
}
