// embedding_dense_backward is a kernel of both targets (a zeroed table and
// the gradient rows added to the rows their indices name), not a one-hot
// GEMM; padding_idx (-1: none) is its last argument. bf16 computes in f32
// through conversions around it. scale_grad_by_freq is an error naming it.
// RUN: dynoc build %s -o %t.cpp --emit=cpp && FileCheck %s --check-prefixes=CHECK,CPU < %t.cpp
// RUN: dynoc build --target=cuda %s -o %t.cu --emit=cu && FileCheck %s --check-prefixes=CHECK,CUDA < %t.cu
// RUN: not dynoc build %S/Inputs/embedding-backward-by-freq.mlir -o %t.so 2>&1 | FileCheck %s --check-prefix=FREQ

func.func @graph_0(%g: tensor<2x5x4xf32>, %i: tensor<2x5xi64>, %h: tensor<6x4xbf16>, %j: tensor<6xi64>) -> (tensor<11x4xf32>, tensor<7x4xbf16>) attributes {dynoc.inputs = [{kind = "user", name = "L['g']"}, {kind = "user", name = "L['i']"}, {kind = "user", name = "L['h']"}, {kind = "user", name = "L['j']"}]} {
  %0 = aten.embedding_dense_backward %g, %i {num_weights = 11 : i64, padding_idx = 0 : i64, scale_grad_by_freq = false} : (tensor<2x5x4xf32>, tensor<2x5xi64>) -> tensor<11x4xf32>
  %1 = aten.embedding_dense_backward %h, %j {num_weights = 7 : i64, padding_idx = -1 : i64, scale_grad_by_freq = false} : (tensor<6x4xbf16>, tensor<6xi64>) -> tensor<7x4xbf16>
  return %0, %1 : tensor<11x4xf32>, tensor<7x4xbf16>
}

// CHECK-NOT: dynoc_k::gemm
// CHECK: dynoc_k::embedding_backward({{[a-z0-9]+}}, a0, a1, 10, 11, 4, int64_t(0))) return rc;
// CHECK: dynoc_k::embedding_backward([[W:[a-z0-9]+]], {{[a-z0-9]+}}, a3, 6, 7, 4, int64_t(-1))) return rc;
// CPU-NOT: dynoc_k::gemm
// CUDA-NOT: dynoc_k::gemm
// FREQ: embedding-backward-by-freq.mlir:{{[0-9]+}}:{{[0-9]+}}: error: dynoc build (cpu): embedding_dense_backward with scale_grad_by_freq is not supported yet
