// dynoc-decompose rewrites composite ops by the table in
// lib/passes/Decompositions.td and leaves everything else alone.

func.func @silu(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = aten.silu %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

func.func @square_and_hardswish(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %0 = aten.square %x : (tensor<?x8xf32>) -> tensor<?x8xf32>
  %1 = aten.hardswish %0 : (tensor<?x8xf32>) -> tensor<?x8xf32>
  return %1 : tensor<?x8xf32>
}

func.func @t(%m: tensor<3x5xf32>, %v: tensor<5xf32>) -> (tensor<5x3xf32>, tensor<5xf32>) {
  // A 2-D t is a transpose of dims 0 and 1; t of a 1-D tensor stays.
  %0 = aten.t %m : (tensor<3x5xf32>) -> tensor<5x3xf32>
  %1 = aten.t %v : (tensor<5xf32>) -> tensor<5xf32>
  return %0, %1 : tensor<5x3xf32>, tensor<5xf32>
}

func.func @untouched(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = aten.relu %x : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
