// RUN: not dynoc build %s -o %t.so 2>&1 | FileCheck %s

func.func @graph_0(%x: tensor<4xui16>) -> tensor<4xui16> attributes {dynoc.inputs = [{kind = "user", name = "L['x']"}]} {
  // CHECK: error: dynoc build (cpu): argument 0 has type 'tensor<4xui16>'; the CPU backend supports f32, f64, bf16, f16, i64, i32, i16, i8, ui8 and bool tensors only so far
  %0 = aten.relu %x : (tensor<4xui16>) -> tensor<4xui16>
  return %0 : tensor<4xui16>
}
