// The CUDA printer hands a ReLU or hardtanh that alone follows a convolution
// to the convolution primitive as its clamp (no pass of its own); a
// convolution followed by other ops gets no clamp (-INFINITY, INFINITY), and
// its bias is added in their kernel (a channel-broadcast operand) instead of
// by the primitive.
// RUN: dynoc build --target=cuda %s -o %t.cu --emit=cu
// RUN: FileCheck %s < %t.cu

func.func @graph_0(%x: tensor<2x8x6x6xf32>, %w1: tensor<8x1x3x3xf32>, %b1: tensor<8xf32>, %w2: tensor<8x8x1x1xf32>, %w3: tensor<4x8x1x1xf32>, %b3: tensor<4xf32>, %y: tensor<2x4x6x6xf32>) -> tensor<2x4x6x6xf32> attributes {dynoc.inputs = [{kind = "user", name = "L['x']"}, {kind = "parameter", name = "w1"}, {kind = "parameter", name = "b1"}, {kind = "parameter", name = "w2"}, {kind = "parameter", name = "w3"}, {kind = "parameter", name = "b3"}, {kind = "user", name = "L['y']"}]} {
  %0 = "aten.convolution"(%x, %w1, %b1) {stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, transposed = false, output_padding = array<i64: 0, 0>, groups = 8 : i64} : (tensor<2x8x6x6xf32>, tensor<8x1x3x3xf32>, tensor<8xf32>) -> tensor<2x8x6x6xf32>
  %1 = "aten.hardtanh"(%0) {min_val = 0.0 : f64, max_val = 6.0 : f64} : (tensor<2x8x6x6xf32>) -> tensor<2x8x6x6xf32>
  %2 = "aten.convolution"(%1, %w2) {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, transposed = false, output_padding = array<i64: 0, 0>, groups = 1 : i64} : (tensor<2x8x6x6xf32>, tensor<8x8x1x1xf32>) -> tensor<2x8x6x6xf32>
  %3 = "aten.relu"(%2) : (tensor<2x8x6x6xf32>) -> tensor<2x8x6x6xf32>
  %4 = "aten.convolution"(%3, %w3, %b3) {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, transposed = false, output_padding = array<i64: 0, 0>, groups = 1 : i64} : (tensor<2x8x6x6xf32>, tensor<4x8x1x1xf32>, tensor<4xf32>) -> tensor<2x4x6x6xf32>
  %5 = "aten.add.Tensor"(%4, %y) : (tensor<2x4x6x6xf32>, tensor<2x4x6x6xf32>) -> tensor<2x4x6x6xf32>
  return %5 : tensor<2x4x6x6xf32>
}

// CHECK: __global__ void dynoc_pointwise_0(IT n, TD *dst, const T0 *b0, const T1 *b1, const T2 *b2) {
// CHECK: const float x0 = float(b0[i]);
// CHECK-NEXT: const float x1 = float(b1[((i / 36) % 4)]);
// CHECK-NEXT: const float x2 = float(b2[i]);
// CHECK-NEXT: const float t0 = x0 + x1;
// CHECK-NEXT: const float t1 = t0 + x2;
// CHECK-NOT: __global__
// CHECK: dynoc_k::conv2d_primitive({{.*}}, a1, a2, 2, 8, 6, 6, 8, 3, 3, 6, 6, 1, 1, 1, 1, 8, 1, 1, 0.000000000e+00f, 6.000000000e+00f); rc > 0) return rc;
// CHECK-NOT: DYNOC_LAUNCH
// CHECK: dynoc_k::conv2d_primitive({{.*}}, a3, nullptr, 2, 8, 6, 6, 8, 1, 1, 6, 6, 1, 1, 0, 0, 1, 1, 1, 0.000000000e+00f, INFINITY); rc > 0) return rc;
// CHECK-NOT: DYNOC_LAUNCH
// CHECK: dynoc_k::conv2d_primitive({{.*}}, a4, nullptr, 2, 8, 6, 6, 4, 1, 1, 6, 6, 1, 1, 0, 0, 1, 1, 1, -INFINITY, INFINITY); rc > 0) return rc;
// CHECK: DYNOC_LAUNCH32(dynoc_pointwise_0, 288, {{v[0-9]+|o[0-9]+}}, {{v[0-9]+}}, a5, a6);
