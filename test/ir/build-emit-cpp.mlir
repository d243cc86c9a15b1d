// `dynoc build --emit=cpp` writes the generated kernels; a transpose feeding a
// GEMM folds into its transB flag, and a vector bias is the GEMM's bias
// (gemm_bias) rather than a broadcast before it.
// RUN: dynoc build -O0 %s -o %t.cpp --emit=cpp && FileCheck %s < %t.cpp
// An elementwise op's function is a function object at file scope, once per
// distinct body (a lambda would be a new template instantiation per op).
// CHECK: struct dynoc_fn_0 {
// CHECK-NEXT: DYNOC_FN auto operator()(float x) const { return x > 0.f ? x : 0.f; }

func.func @graph_0(%x: tensor<4x16xf32>, %w: tensor<8x16xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> attributes {dynoc.inputs = [{kind = "user", name = "L['x']"}, {kind = "parameter", name = "w"}, {kind = "parameter", name = "b"}], dynoc.weights = "weights.safetensors"} {
  // CHECK: extern "C" DYNOC_EXPORT int dynoc_graph_0_run(const int64_t *const *in, void *const *args, void *const *outs, void *workspace)
  // CHECK-NOT: dynoc_k::permute
  // CHECK: float *v1 = reinterpret_cast<float *>(ws + o[0]);
  // CHECK-NOT: dynoc_k::expand
  // CHECK: dynoc_k::gemm_bias(true, 4, 8, 16, {{.*}}, a0, a1, a2, v1)
  // CHECK: float *v2 = static_cast<float *>(outs[0]);
  // CHECK: dynoc_k::unary(v2, v1, 32, dynoc_fn_0{});
  %0 = aten.t %w : (tensor<8x16xf32>) -> tensor<16x8xf32>
  %1 = aten.addmm %b, %x, %0 : (tensor<8xf32>, tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
  %2 = aten.relu %1 : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %2 : tensor<4x8xf32>
}
// CHECK: "name": "L['x']"
// CHECK: dynoc_model_manifest
