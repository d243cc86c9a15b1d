// RUN: not dynoc opt %s 2>&1 | FileCheck %s

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: unknown-generic-op.mlir:[[@LINE+1]]:8: error: unregistered operation 'aten.frobnicate' found in dialect ('aten') that does not allow unknown operations
  %0 = "aten.frobnicate"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
