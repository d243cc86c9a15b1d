// `dynoc build --emit=cpp` writes the generated kernels; a transpose feeding a
// GEMM folds into its transB flag, and a vector bias is the GEMM's bias
// (gemm_bias) rather than a broadcast before it.
// An elementwise op's function is a function object at file scope, once per
// distinct body (a lambda would be a new template instantiation per op).

func.func @graph_0(%x: tensor<4x16xf32>, %w: tensor<8x16xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> attributes {dynoc.inputs = [{kind = "user", name = "L['x']"}, {kind = "parameter", name = "w"}, {kind = "parameter", name = "b"}], dynoc.weights = "weights.safetensors"} {
  %0 = aten.t %w : (tensor<8x16xf32>) -> tensor<16x8xf32>
  %1 = aten.addmm %b, %x, %0 : (tensor<8xf32>, tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
  %2 = aten.relu %1 : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %2 : tensor<4x8xf32>
}
