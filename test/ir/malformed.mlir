// Malformed input gets a diagnostic at file:line:col.
// RUN: not dynoc opt %s 2>&1 | FileCheck %s

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: malformed.mlir:[[@LINE+1]]:25: error: expected '{' to begin a region
  %0 = "aten.relu"(%x) (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
