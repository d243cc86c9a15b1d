// aten ops without side effects are Pure: CSE and DCE apply.
// RUN: dynoc opt %s --pass=cse,canonicalize | FileCheck %s

// CHECK-LABEL: func.func @f
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: %[[R:.*]] = aten.relu %arg0
  // CHECK-NOT: aten.relu
  // CHECK-NOT: aten.exp
  // CHECK: aten.add.Tensor %[[R]], %[[R]]
  %0 = aten.relu %x : (tensor<4xf32>) -> tensor<4xf32>
  %1 = aten.relu %x : (tensor<4xf32>) -> tensor<4xf32>
  %2 = aten.exp %x : (tensor<4xf32>) -> tensor<4xf32>
  %3 = aten.add.Tensor %0, %1 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %3 : tensor<4xf32>
}
