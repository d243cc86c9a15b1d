// dynoc-widen-reduced-precision: ops that compute read bf16/f16 through a
// conversion to f32 and round their result back once; data movement stays in
// the reduced type.

func.func @mlp(%x: tensor<2x3xbf16>, %w: tensor<4x3xbf16>) -> tensor<2x4xbf16> {
  %t = aten.t %w : (tensor<4x3xbf16>) -> tensor<3x4xbf16>
  %y = aten.mm %x, %t : (tensor<2x3xbf16>, tensor<3x4xbf16>) -> tensor<2x4xbf16>
  %z = aten.relu %y : (tensor<2x4xbf16>) -> tensor<2x4xbf16>
  return %z : tensor<2x4xbf16>
}

// A result already in f32 (softmax with half_to_float) is not converted; an f16
// comparison reads f32 and gives bool as before.
func.func @mixed(%x: tensor<5xf16>) -> (tensor<5xf32>, tensor<5xi1>) {
  %s = aten._softmax %x {dim = 0 : i64, half_to_float = true} : (tensor<5xf16>) -> tensor<5xf32>
  %g = aten.gt.Scalar %x {other = 0 : i64} : (tensor<5xf16>) -> tensor<5xi1>
  return %s, %g : tensor<5xf32>, tensor<5xi1>
}
