// dynoc-widen-reduced-precision: ops that compute read bf16/f16 through a
// conversion to f32 and round their result back once; data movement stays in
// the reduced type.
// RUN: dynoc opt %s --pass=dynoc-widen-reduced-precision | FileCheck %s

// CHECK-LABEL: func.func @mlp
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xbf16>, %[[W:.*]]: tensor<4x3xbf16>)
// CHECK-NEXT: %[[T:.*]] = aten.t %[[W]] : (tensor<4x3xbf16>) -> tensor<3x4xbf16>
// CHECK-NEXT: %[[XF:.*]] = aten._to_copy %[[X]] {dtype = f32} : (tensor<2x3xbf16>) -> tensor<2x3xf32>
// CHECK-NEXT: %[[TF:.*]] = aten._to_copy %[[T]] {dtype = f32} : (tensor<3x4xbf16>) -> tensor<3x4xf32>
// CHECK-NEXT: %[[Y:.*]] = aten.mm %[[XF]], %[[TF]] : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT: %[[YB:.*]] = aten._to_copy %[[Y]] {dtype = bf16} : (tensor<2x4xf32>) -> tensor<2x4xbf16>
// CHECK-NEXT: %[[YF:.*]] = aten._to_copy %[[YB]] {dtype = f32}
// CHECK-NEXT: %[[R:.*]] = aten.relu %[[YF]] : (tensor<2x4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT: %[[RB:.*]] = aten._to_copy %[[R]] {dtype = bf16}
// CHECK-NEXT: return %[[RB]] : tensor<2x4xbf16>
func.func @mlp(%x: tensor<2x3xbf16>, %w: tensor<4x3xbf16>) -> tensor<2x4xbf16> {
  %t = aten.t %w : (tensor<4x3xbf16>) -> tensor<3x4xbf16>
  %y = aten.mm %x, %t : (tensor<2x3xbf16>, tensor<3x4xbf16>) -> tensor<2x4xbf16>
  %z = aten.relu %y : (tensor<2x4xbf16>) -> tensor<2x4xbf16>
  return %z : tensor<2x4xbf16>
}

// A result already in f32 (softmax with half_to_float) is not converted; an f16
// comparison reads f32 and gives bool as before.
// CHECK-LABEL: func.func @mixed
// CHECK: %[[A:.*]] = aten._to_copy %arg0 {dtype = f32} : (tensor<5xf16>) -> tensor<5xf32>
// CHECK-NEXT: %[[S:.*]] = aten._softmax %[[A]] {{.*}} : (tensor<5xf32>) -> tensor<5xf32>
// CHECK-NEXT: %[[B:.*]] = aten._to_copy %arg0 {dtype = f32}
// CHECK-NEXT: %[[G:.*]] = aten.gt.Scalar %[[B]] {{.*}} : (tensor<5xf32>) -> tensor<5xi1>
// CHECK-NEXT: return %[[S]], %[[G]]
func.func @mixed(%x: tensor<5xf16>) -> (tensor<5xf32>, tensor<5xi1>) {
  %s = aten._softmax %x {dim = 0 : i64, half_to_float = true} : (tensor<5xf16>) -> tensor<5xf32>
  %g = aten.gt.Scalar %x {other = 0 : i64} : (tensor<5xf16>) -> tensor<5xi1>
  return %s, %g : tensor<5xf32>, tensor<5xi1>
}

// 8- and 16-bit integers compute in i32 and convert back (wrapping as eager's
// arithmetic does); their data movement stays narrow.
// CHECK-LABEL: func.func @narrow_ints
// CHECK: %[[T:.*]] = aten.t %arg0 : (tensor<2x3xui8>) -> tensor<3x2xui8>
// CHECK-NEXT: %[[A:.*]] = aten._to_copy %[[T]] {dtype = i32} : (tensor<3x2xui8>) -> tensor<3x2xi32>
// CHECK-NEXT: %[[B:.*]] = aten._to_copy %arg1 {dtype = i32} : (tensor<3x2xi8>) -> tensor<3x2xi32>
// CHECK-NEXT: %[[S:.*]] = aten.mul.Tensor %[[A]], %[[B]] : (tensor<3x2xi32>, tensor<3x2xi32>) -> tensor<3x2xi32>
// CHECK-NEXT: %[[R:.*]] = aten._to_copy %[[S]] {dtype = i16} : (tensor<3x2xi32>) -> tensor<3x2xi16>
// CHECK-NEXT: return %[[R]]
func.func @narrow_ints(%x: tensor<2x3xui8>, %y: tensor<3x2xi8>) -> tensor<3x2xi16> {
  %t = aten.t %x : (tensor<2x3xui8>) -> tensor<3x2xui8>
  %m = aten.mul.Tensor %t, %y : (tensor<3x2xui8>, tensor<3x2xi8>) -> tensor<3x2xi16>
  return %m : tensor<3x2xi16>
}
