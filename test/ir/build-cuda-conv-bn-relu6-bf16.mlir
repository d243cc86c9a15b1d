// A bf16 convolution, eval batch norm and ReLU6 (MobileNet's block) on the
// CUDA target: the norm folds into the convolution (its weight and bias
// computed in f32 at load and rounded to bf16), the round trip to f32 and
// back that the widening left goes, and the ReLU6 is the convolution's clamp:
// one convolution call and no elementwise kernel in the run function.
// RUN: dynoc build --target=cuda %s -o %t.cu --emit=cu
// RUN: FileCheck %s < %t.cu

func.func @graph_0(%x: tensor<2x8x6x6xbf16>, %w: tensor<8x1x3x3xbf16>, %g: tensor<8xbf16>, %b: tensor<8xbf16>, %m: tensor<8xbf16>, %v: tensor<8xbf16>) -> tensor<2x8x6x6xbf16> attributes {dynoc.inputs = [{kind = "user", name = "L['x']"}, {kind = "parameter", name = "w"}, {kind = "parameter", name = "g"}, {kind = "parameter", name = "b"}, {kind = "buffer", name = "m"}, {kind = "buffer", name = "v"}]} {
  %0 = "aten.convolution"(%x, %w) {stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, transposed = false, output_padding = array<i64: 0, 0>, groups = 8 : i64} : (tensor<2x8x6x6xbf16>, tensor<8x1x3x3xbf16>) -> tensor<2x8x6x6xbf16>
  %1, %2, %3 = "aten.native_batch_norm"(%0, %g, %b, %m, %v) {training = false, momentum = 0.1 : f64, eps = 1.0e-05 : f64, operand_segment_sizes = array<i32: 1, 1, 1, 1, 1>} : (tensor<2x8x6x6xbf16>, tensor<8xbf16>, tensor<8xbf16>, tensor<8xbf16>, tensor<8xbf16>) -> (tensor<2x8x6x6xbf16>, tensor<0xbf16>, tensor<0xbf16>)
  %4 = "aten.hardtanh"(%1) {min_val = 0.0 : f64, max_val = 6.0 : f64} : (tensor<2x8x6x6xbf16>) -> tensor<2x8x6x6xbf16>
  return %4 : tensor<2x8x6x6xbf16>
}

// CHECK: int dynoc_graph_0_run(
// CHECK-NOT: DYNOC_LAUNCH
// CHECK: dynoc_k::conv2d_primitive({{.*}}, 2, 8, 6, 6, 8, 3, 3, 6, 6, 1, 1, 1, 1, 8, 1, 1, 0.000000000e+00f, 6.000000000e+00f); rc > 0) return rc;
// CHECK-NOT: DYNOC_LAUNCH
// CHECK: return dynoc_k::finish();
// CHECK: dynoc_graph_0_prepare_run(
