// dynoc build runs the graph passes (from -O1): a GEMM's bias and ReLU
// epilogue and a batch norm + ReLU chain each become one loop, written out so
// that the inner loop reads dense or per-row operands and vectorizes.

// Each loop is a function at file scope, printed once per distinct body (the
// run function calls it): the epilogue's, then the batch norm chain's.
// DEF: static void dynoc_pointwise_0(O *out, const I0 *in0, const int64_t *st0, const int64_t *shape)
// DEF: #pragma omp simd
// DEF-NEXT: for (int64_t i = 0; i < inner; ++i) {
// DEF-NEXT: const float x0 = float(p0[i]);
// DEF-NEXT: const float t0 = x0 > 0.f ? x0 : 0.f;
// DEF-NEXT: dst[i] = t0;
// DEF: static void dynoc_pointwise_1(
// DEF: const float x0 = float(p0[0]);
// DEF-NEXT: const float x1 = float(p1[0]);
// DEF-NEXT: const float x2 = float(p2[i]);
// DEF-NEXT: const float t0 = x2 * x0 + x1;
// DEF-NEXT: const float t1 = t0 > 0.f ? t0 : 0.f;

// MLIR: dynoc.fusion_group "epilogue"
// MLIR: dynoc.fusion_group "elementwise"
func.func @graph_0(%x: tensor<4x16xf32>, %w: tensor<8x16xf32>, %b: tensor<8xf32>, %y: tensor<2x4x3x3xf32>, %m: tensor<4xf32>, %v: tensor<4xf32>) -> (tensor<4x8xf32>, tensor<2x4x3x3xf32>) attributes {dynoc.inputs = [{kind = "user", name = "x"}, {kind = "parameter", name = "w"}, {kind = "parameter", name = "b"}, {kind = "user", name = "y"}, {kind = "buffer", name = "m"}, {kind = "buffer", name = "v"}]} {
  %0 = aten.t %w : (tensor<8x16xf32>) -> tensor<16x8xf32>
  %1 = aten.addmm %b, %x, %0 : (tensor<8xf32>, tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
  %2 = aten.relu %1 : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %3, %4, %5 = "aten.native_batch_norm"(%y, %m, %v) {training = false, momentum = 0.1 : f64, eps = 1.0e-05 : f64, operand_segment_sizes = array<i32: 1, 0, 0, 1, 1>} : (tensor<2x4x3x3xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<2x4x3x3xf32>, tensor<0xf32>, tensor<0xf32>)
  %6 = aten.relu %3 : (tensor<2x4x3x3xf32>) -> tensor<2x4x3x3xf32>
  return %2, %6 : tensor<4x8xf32>, tensor<2x4x3x3xf32>
}
