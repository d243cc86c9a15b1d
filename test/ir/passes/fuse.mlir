// dynoc-fuse groups single-use elementwise chains, and a GEMM or convolution
// with the elementwise ops that consume it, into dynoc.fusion_group.
// RUN: dynoc opt %s --pass=dynoc-fuse | FileCheck %s

// CHECK-LABEL: func.func @chain
func.func @chain(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  // CHECK: %[[G:.*]] = dynoc.fusion_group "elementwise"(%arg0, %arg1) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32> {
  // CHECK-NEXT: ^bb0(%[[X:.*]]: tensor<4x8xf32>, %[[B:.*]]: tensor<8xf32>):
  // CHECK-NEXT: %[[A:.*]] = aten.add.Tensor %[[X]], %[[B]]
  // CHECK-NEXT: %[[R:.*]] = aten.relu %[[A]]
  // CHECK-NEXT: %[[N:.*]] = aten.mul.Scalar %[[R]]
  // CHECK-NEXT: dynoc.yield %[[N]] : tensor<4x8xf32>
  // CHECK: return %[[G]]
  %0 = aten.add.Tensor %x, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %1 = aten.relu %0 : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = aten.mul.Scalar %1 {other = 2.0 : f64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %2 : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @gemm_epilogue
func.func @gemm_epilogue(%x: tensor<4x16xf32>, %w: tensor<8x16xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  // The transpose feeding the GEMM stays outside: the code generator folds it.
  // CHECK: %[[T:.*]] = aten.t %arg1
  // CHECK: dynoc.fusion_group "epilogue"(%arg2, %arg0, %[[T]])
  // CHECK: aten.addmm
  // CHECK-NEXT: aten.relu
  // CHECK-NEXT: dynoc.yield
  %0 = aten.t %w : (tensor<8x16xf32>) -> tensor<16x8xf32>
  %1 = aten.addmm %b, %x, %0 : (tensor<8xf32>, tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
  %2 = aten.relu %1 : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %2 : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @conv_bn_relu
func.func @conv_bn_relu(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %g: tensor<4xf32>, %b: tensor<4xf32>, %m: tensor<4xf32>, %v: tensor<4xf32>) -> tensor<1x4x6x6xf32> {
  // CHECK: dynoc.fusion_group "epilogue"
  // CHECK: aten.convolution
  // CHECK-NEXT: aten.native_batch_norm
  // CHECK-NEXT: aten.relu
  %0 = "aten.convolution"(%x, %w) {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, transposed = false, output_padding = array<i64: 0, 0>, groups = 1 : i64} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  %1, %2, %3 = "aten.native_batch_norm"(%0, %g, %b, %m, %v) {training = false, momentum = 0.1 : f64, eps = 1.0e-05 : f64, operand_segment_sizes = array<i32: 1, 1, 1, 1, 1>} : (tensor<1x4x6x6xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<1x4x6x6xf32>, tensor<0xf32>, tensor<0xf32>)
  %4 = aten.relu %1 : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  return %4 : tensor<1x4x6x6xf32>
}

// CHECK-LABEL: func.func @not_fused
func.func @not_fused(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x1xf32>) {
  // A value with two users ends a chain; gelu stays alone (its own kernel is
  // vectorized); an op changing the shape is not elementwise.
  // CHECK-NOT: dynoc.fusion_group
  %0 = aten.relu %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = aten.neg %0 : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = aten.gelu %0 : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %3 = aten.view %x {size = array<i64: 32>} : (tensor<4x8xf32>) -> tensor<32xf32>
  %4 = "aten.sum.dim_IntList"(%1) {dim = array<i64: 1>, keepdim = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  return %1, %2, %4 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x1xf32>
}

// CHECK-LABEL: func.func @two_chains_meet
func.func @two_chains_meet(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  // Both relus' only user is the add: it joins the first chain, which then
  // takes in the second relu as the producer of its other operand (a tree).
  // CHECK-NOT: aten.relu
  // CHECK: dynoc.fusion_group "elementwise"(%arg0, %arg1)
  // CHECK: aten.relu
  // CHECK-NEXT: aten.relu
  // CHECK-NEXT: aten.add.Tensor
  // CHECK-NEXT: aten.neg
  %a = aten.relu %x : (tensor<4xf32>) -> tensor<4xf32>
  %b = aten.relu %y : (tensor<4xf32>) -> tensor<4xf32>
  %c = aten.add.Tensor %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %d = aten.neg %c : (tensor<4xf32>) -> tensor<4xf32>
  return %d : tensor<4xf32>
}

// A bf16 residual widened for the addition (dynoc-widen-reduced-precision's
// conversion of a graph input) joins the chain before the add: the loop reads
// the bf16 input, not an f32 copy. A conversion with another user stays out.
// CHECK-LABEL: func.func @residual_conversion
func.func @residual_conversion(%x: tensor<4x8xbf16>, %y: tensor<4x8xbf16>, %z: tensor<4x8xbf16>) -> (tensor<4x8xbf16>, tensor<4x8xf32>) {
  // CHECK: %[[ZF:.*]] = aten._to_copy %arg2
  // CHECK: dynoc.fusion_group "elementwise"(%arg0, %arg1, %[[ZF]])
  // CHECK-NEXT: ^bb0(%[[X:.*]]: tensor<4x8xbf16>, %[[Y:.*]]: tensor<4x8xbf16>, %[[Z:.*]]: tensor<4x8xf32>):
  // CHECK-NEXT: %[[XF:.*]] = aten._to_copy %[[X]]
  // CHECK-NEXT: %[[R:.*]] = aten.relu %[[XF]]
  // CHECK-NEXT: %[[YF:.*]] = aten._to_copy %[[Y]]
  // CHECK-NEXT: %[[A:.*]] = aten.add.Tensor %[[YF]], %[[R]]
  // CHECK-NEXT: %[[M:.*]] = aten.mul.Tensor %[[A]], %[[Z]]
  // CHECK-NEXT: %[[O:.*]] = aten._to_copy %[[M]]
  // CHECK-NEXT: dynoc.yield %[[O]] : tensor<4x8xbf16>
  %zf = aten._to_copy %z {dtype = f32} : (tensor<4x8xbf16>) -> tensor<4x8xf32>
  %xf = aten._to_copy %x {dtype = f32} : (tensor<4x8xbf16>) -> tensor<4x8xf32>
  %r = aten.relu %xf : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %yf = aten._to_copy %y {dtype = f32} : (tensor<4x8xbf16>) -> tensor<4x8xf32>
  %a = aten.add.Tensor %yf, %r : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %m = aten.mul.Tensor %a, %zf : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %o = aten._to_copy %m {dtype = bf16} : (tensor<4x8xf32>) -> tensor<4x8xbf16>
  return %o, %zf : tensor<4x8xbf16>, tensor<4x8xf32>
}

// CHECK-LABEL: func.func @tree_keeps_shared_values_out
func.func @tree_keeps_shared_values_out(%v: tensor<8xf32>, %g: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  // Adam's second moment: v * 0.999 + (g * g) * 0.001 is one loop (the
  // product chain is taken in by the sum's chain); a value read outside (%m,
  // returned too) ends the tree.
  // CHECK: %[[M:.*]] = dynoc.fusion_group "elementwise"(%arg1)
  // CHECK: dynoc.fusion_group "elementwise"(%arg0, %[[M]])
  // CHECK-NEXT: ^bb0
  // CHECK-NEXT: aten.mul.Scalar
  // CHECK-NEXT: aten.mul.Scalar
  // CHECK-NEXT: aten.add.Tensor
  // CHECK-NEXT: aten.sqrt
  %a = aten.mul.Scalar %v {other = 0.999 : f64} : (tensor<8xf32>) -> tensor<8xf32>
  %gg = aten.mul.Tensor %g, %g : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %m = aten.neg %gg : (tensor<8xf32>) -> tensor<8xf32>
  %b = aten.mul.Scalar %m {other = 0.001 : f64} : (tensor<8xf32>) -> tensor<8xf32>
  %s = aten.add.Tensor %a, %b : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %r = aten.sqrt %s : (tensor<8xf32>) -> tensor<8xf32>
  return %r, %m : tensor<8xf32>, tensor<8xf32>
}
