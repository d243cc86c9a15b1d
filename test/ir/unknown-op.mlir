// An op that is not an ATen overload is rejected where it stands.
// RUN: not dynoc opt %s 2>&1 | FileCheck %s

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: unknown-op.mlir:[[@LINE+1]]:8: error: custom op 'aten.frobnicate' is unknown
  %0 = aten.frobnicate %x : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
