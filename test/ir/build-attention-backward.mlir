// Attention's backward (what torch's SDPA records for a training step) is a
// CPU kernel: the gradients of query, key and value (grouped-query heads: 4
// query heads over 2 key/value heads), from the probabilities computed again;
// the forward writes its log-sum-exp where the training graph keeps it. The
// CUDA target does not build the backward yet: a located error naming it.
// RUN: dynoc build %s -o %t.cpp --emit=cpp && FileCheck %s < %t.cpp
// RUN: not dynoc build --target=cuda %s -o %t.cu --emit=cu 2>&1 | FileCheck %s --check-prefix=CUDA

func.func @graph_0(%q: tensor<2x4x8x16xf32>, %k: tensor<2x2x8x16xf32>, %v: tensor<2x2x8x16xf32>, %g: tensor<2x4x8x16xf32>) -> (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>) attributes {dynoc.inputs = [{kind = "user", name = "L['q']"}, {kind = "user", name = "L['k']"}, {kind = "user", name = "L['v']"}, {kind = "user", name = "L['g']"}]} {
  %o, %lse = "aten._scaled_dot_product_flash_attention_for_cpu"(%q, %k, %v) {dropout_p = 0.0 : f64, is_causal = true} : (tensor<2x4x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>) -> (tensor<2x4x8x16xf32>, tensor<2x4x8xf32>)
  %dq, %dk, %dv = "aten._scaled_dot_product_flash_attention_for_cpu_backward"(%g, %q, %k, %v, %o, %lse) {dropout_p = 0.0 : f64, is_causal = true} : (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8xf32>) -> (tensor<2x4x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>)
  return %o, %dq, %dk, %dv : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>
}

// CHECK: dynoc_k::attention({{.*}}, 8, 8, 16, 16, 2.50000000000000000e-01, true, {{.*}}, 4, 2, {{[a-z0-9]+}})) return rc;
// CHECK: dynoc_k::attention_backward({{.*}}, a3, a0, a1, a2, {{.*}}, 8, 8, 16, 16, 2.50000000000000000e-01, true, {{.*}}, 4, 2)) return rc;
// CUDA: build-attention-backward.mlir:{{[0-9]+}}:{{[0-9]+}}: error: dynoc build (cuda): {{.*}}_scaled_dot_product_flash_attention_for_cpu_backward
