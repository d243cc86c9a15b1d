// dynoc-canonicalize: copies, reshapes to the same type, chains of reshapes,
// ops that undo each other and arithmetic with its identity disappear.
// RUN: dynoc opt %s --pass=dynoc-canonicalize | FileCheck %s

// CHECK-LABEL: func.func @copies
// CHECK-NEXT: %[[R:.*]] = aten.relu %arg0
// CHECK-NEXT: return %[[R]]
func.func @copies(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = aten.clone %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = aten.detach %0 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %2 = aten._to_copy %1 {dtype = f32} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %3 = aten.view %2 {size = array<i64: 2, 3>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %4 = aten.relu %3 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %5 = aten.mul.Scalar %4 {other = 1 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %6 = aten.add.Scalar %5 {other = 0.0 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %6 : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @reshapes
// CHECK-NEXT: %[[V:.*]] = aten.view %arg0 {size = array<i64: 3, 2>} : (tensor<6xf32>) -> tensor<3x2xf32>
// CHECK-NEXT: return %[[V]]
func.func @reshapes(%x: tensor<6xf32>) -> tensor<3x2xf32> {
  %0 = aten.view %x {size = array<i64: 2, 3>} : (tensor<6xf32>) -> tensor<2x3xf32>
  %1 = aten.view %0 {size = array<i64: 3, 2>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return %1 : tensor<3x2xf32>
}

// CHECK-LABEL: func.func @undo
// CHECK-NEXT: return %arg0, %arg0
func.func @undo(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %0 = aten.t %x : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %1 = aten.t %0 : (tensor<3x2xf32>) -> tensor<2x3xf32>
  %2 = aten.transpose.int %x {dim0 = 0 : i64, dim1 = 1 : i64} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %3 = aten.transpose.int %2 {dim0 = -1 : i64, dim1 = 0 : i64} : (tensor<3x2xf32>) -> tensor<2x3xf32>
  return %1, %3 : tensor<2x3xf32>, tensor<2x3xf32>
}

// What changes the value or its type stays: a reshape to another shape, a
// dtype conversion, a scale by 2, a dynamic view.
// CHECK-LABEL: func.func @kept
// CHECK: aten._to_copy
// CHECK: aten.mul.Scalar
// CHECK: aten.view
func.func @kept(%x: tensor<2x3xf32>, %y: tensor<?x3xf32>) -> (tensor<2x3xf64>, tensor<2x3xf32>, tensor<?x3xf32>) {
  %0 = aten._to_copy %x {dtype = f64} : (tensor<2x3xf32>) -> tensor<2x3xf64>
  %1 = aten.mul.Scalar %x {other = 2 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %2 = aten.view %y {size = array<i64: -1, 3>} : (tensor<?x3xf32>) -> tensor<?x3xf32>
  return %0, %1, %2 : tensor<2x3xf64>, tensor<2x3xf32>, tensor<?x3xf32>
}

// bf16 -> f32 -> bf16 is the value itself (the widening is exact); f32 ->
// bf16 -> f32 rounds and stays.
// CHECK-LABEL: func.func @conversion_round_trips
// CHECK-NEXT: %[[N:.*]] = aten._to_copy %arg1 {dtype = bf16}
// CHECK-NEXT: %[[W:.*]] = aten._to_copy %[[N]] {dtype = f32}
// CHECK-NEXT: return %arg0, %[[W]]
func.func @conversion_round_trips(%x: tensor<2x3xbf16>, %y: tensor<2x3xf32>) -> (tensor<2x3xbf16>, tensor<2x3xf32>) {
  %0 = aten._to_copy %x {dtype = f32} : (tensor<2x3xbf16>) -> tensor<2x3xf32>
  %1 = aten._to_copy %0 {dtype = bf16} : (tensor<2x3xf32>) -> tensor<2x3xbf16>
  %2 = aten._to_copy %y {dtype = bf16} : (tensor<2x3xf32>) -> tensor<2x3xbf16>
  %3 = aten._to_copy %2 {dtype = f32} : (tensor<2x3xbf16>) -> tensor<2x3xf32>
  return %1, %3 : tensor<2x3xbf16>, tensor<2x3xf32>
}

// Grouped-query attention with its key/value heads repeated (transformers'
// repeat_kv: unsqueeze, expand, contiguous copy, reshape) reads the 2 heads
// themselves; a repeat that is not along the heads stays.
// CHECK-LABEL: func.func @repeated_heads
// CHECK-NOT: aten.expand
// CHECK: aten._scaled_dot_product_flash_attention_for_cpu"(%arg0, %arg1, %arg2)
// CHECK-SAME: (tensor<1x8x16x32xf32>, tensor<1x2x16x32xf32>, tensor<1x2x16x32xf32>)
func.func @repeated_heads(%q: tensor<1x8x16x32xf32>, %k: tensor<1x2x16x32xf32>, %v: tensor<1x2x16x32xf32>) -> tensor<1x8x16x32xf32> {
  %0 = aten.unsqueeze %k {dim = 2 : i64} : (tensor<1x2x16x32xf32>) -> tensor<1x2x1x16x32xf32>
  %1 = aten.expand %0 {size = array<i64: 1, 2, 4, 16, 32>} : (tensor<1x2x1x16x32xf32>) -> tensor<1x2x4x16x32xf32>
  %2 = aten.clone %1 {memory_format = "torch.contiguous_format"} : (tensor<1x2x4x16x32xf32>) -> tensor<1x2x4x16x32xf32>
  %3 = aten._unsafe_view %2 {size = array<i64: 1, 8, 16, 32>} : (tensor<1x2x4x16x32xf32>) -> tensor<1x8x16x32xf32>
  %4 = aten.unsqueeze %v {dim = 2 : i64} : (tensor<1x2x16x32xf32>) -> tensor<1x2x1x16x32xf32>
  %5 = aten.expand %4 {size = array<i64: 1, 2, 4, 16, 32>} : (tensor<1x2x1x16x32xf32>) -> tensor<1x2x4x16x32xf32>
  %6 = aten._unsafe_view %5 {size = array<i64: 1, 8, 16, 32>} : (tensor<1x2x4x16x32xf32>) -> tensor<1x8x16x32xf32>
  %o, %lse = "aten._scaled_dot_product_flash_attention_for_cpu"(%q, %3, %6) {scale = 0.125 : f64} : (tensor<1x8x16x32xf32>, tensor<1x8x16x32xf32>, tensor<1x8x16x32xf32>) -> (tensor<1x8x16x32xf32>, tensor<1x8x16xf32>)
  return %o : tensor<1x8x16x32xf32>
}

// CHECK-LABEL: func.func @repeated_sequence
// CHECK: aten.expand
func.func @repeated_sequence(%q: tensor<1x2x64x32xf32>, %k: tensor<1x2x16x32xf32>) -> tensor<1x2x64x32xf32> {
  %0 = aten.unsqueeze %k {dim = 2 : i64} : (tensor<1x2x16x32xf32>) -> tensor<1x2x1x16x32xf32>
  %1 = aten.expand %0 {size = array<i64: 1, 2, 4, 16, 32>} : (tensor<1x2x1x16x32xf32>) -> tensor<1x2x4x16x32xf32>
  %2 = aten._unsafe_view %1 {size = array<i64: 1, 2, 64, 32>} : (tensor<1x2x4x16x32xf32>) -> tensor<1x2x64x32xf32>
  %o, %lse = "aten._scaled_dot_product_flash_attention_for_cpu"(%q, %2, %2) {scale = 0.125 : f64} : (tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32>) -> (tensor<1x2x64x32xf32>, tensor<1x2x64xf32>)
  return %o : tensor<1x2x64x32xf32>
}
