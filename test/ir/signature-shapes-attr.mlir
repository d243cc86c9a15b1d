// dynoc.shapes (set by dynoc-infer-shapes) must hold one symbol-only affine map
// per result, of the result's rank; dynoc.dim_symbols is an array of strings.
// RUN: dynoc opt %s --split-input-file --verify-diagnostics

func.func @rank(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  // expected-error @+1 {{'dynoc.shapes' gives result 0 a rank its type does not have}}
  %0 = aten.relu %x {dynoc.shapes = [affine_map<()[s0] -> (s0)>]} : (tensor<?x4xf32>) -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

func.func @count(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  // expected-error @+1 {{'dynoc.shapes' must hold one affine map ()[symbols] -> (dims) per result}}
  %0 = aten.relu %x {dynoc.shapes = []} : (tensor<?x4xf32>) -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

// expected-error @+1 {{'dynoc.dim_symbols' must be an array of strings}}
func.func @symbols(%x: tensor<?x4xf32>) -> tensor<?x4xf32> attributes {dynoc.dim_symbols = [1]} {
  return %x : tensor<?x4xf32>
}
