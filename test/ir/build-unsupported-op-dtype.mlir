// RUN: not dynoc build %s -o %t.so 2>&1 | FileCheck %s

// f64 runs the elementwise ops and GEMMs but not the batched GEMM: the error
// names the op, its dtype and its place.
func.func @graph_0(%a: tensor<1x2x3xf64>, %b: tensor<1x3x4xf64>) -> tensor<1x2x4xf64> attributes {dynoc.inputs = [{kind = "user", name = "L['a']"}, {kind = "user", name = "L['b']"}]} {
  // CHECK: build-unsupported-op-dtype.mlir:[[@LINE+1]]:8: error: dynoc build (cpu): 'aten.bmm' uses dtype 'f64', which the CPU backend does not run this op on yet
  %0 = aten.bmm %a, %b : (tensor<1x2x3xf64>, tensor<1x3x4xf64>) -> tensor<1x2x4xf64>
  return %0 : tensor<1x2x4xf64>
}
