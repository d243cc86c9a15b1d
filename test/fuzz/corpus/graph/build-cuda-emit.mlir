// The CUDA printer: the shared graph emitter's kernel library calls, a fused
// elementwise chain as a grid-stride kernel at file scope (dense operands at
// the output's index, broadcast ones at an offset of constant divisors, the
// shape being static), printed once for the
// two identical chains and launched twice, the run function's stream, and
// the run state it returns. At -O0 (no fusion) a single elementwise op is a
// kernel of its own too.

func.func @graph_0(%x: tensor<4x8xf32>, %b: tensor<8xf32>, %y: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) attributes {dynoc.inputs = [{kind = "user", name = "L['x']"}, {kind = "user", name = "L['b']"}, {kind = "user", name = "L['y']"}]} {
  %0 = "aten.add.Tensor"(%x, %b) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %1 = "aten.relu"(%0) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = "aten._softmax"(%1) {dim = -1 : i64, half_to_float = false} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %3 = "aten.add.Tensor"(%y, %b) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %4 = "aten.relu"(%3) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %2, %4 : tensor<4x8xf32>, tensor<4x8xf32>
}
// PROGRESS: 1 graph(s) lowered to CUDA source ({{[0-9]+}} bytes, 1 kernel(s))


// SINGLE: __global__ void dynoc_pointwise_0(int64_t n, TD *dst, const T0 *b0, const T1 *b1) {
// SINGLE: const float t0 = x0 + x1;
// SINGLE: __global__ void dynoc_pointwise_1(int64_t n, TD *dst, const T0 *b0) {
// SINGLE: const float t0 = x0 > 0.f ? x0 : 0.f;
// SINGLE-NOT: __global__
// SINGLE: DYNOC_LAUNCH(dynoc_pointwise_0,
// SINGLE: DYNOC_LAUNCH(dynoc_pointwise_1,
// SINGLE: DYNOC_LAUNCH(dynoc_pointwise_0,
// SINGLE: DYNOC_LAUNCH(dynoc_pointwise_1,
