// An arange whose end depends on a dynamic input dim (GPT-2's positions):
// capture keeps the captured end in the attribute and gives the expression in
// dynoc.sym_sizes; the length is computed from the input dims at run time.
// RUN: dynoc opt %s --pass=dynoc-infer-shapes | FileCheck %s --check-prefix=SHAPES
// RUN: dynoc build -O0 %s -o %t.cpp --emit=cpp && FileCheck %s < %t.cpp

// SHAPES: #[[T:.*]] = affine_map<()[s0, s1] -> (s1)>
// SHAPES: aten.arange {dynoc.shapes = [#[[T]]]
func.func @graph_0(%ids: tensor<?x?xi64>) -> tensor<?xi64> attributes {dynoc.inputs = [{kind = "user", name = "L['ids']"}]} {
  // CHECK: p[0] = std::max<int64_t>(0, (in[0][1] - 0 + 1 - 1) / 1);
  // CHECK: dynoc_k::arange({{.*}}, p[0],
  %0 = "aten.arange"() {end = 16 : i64, dynoc.sym_sizes = {end = affine_map<()[s0, s1] -> (s1)>}} : () -> tensor<?xi64>
  return %0 : tensor<?xi64>
}
