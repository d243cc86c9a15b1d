
func.func @symbols(%x: tensor<?x4xf32>) -> tensor<?x4xf32> attributes {dynoc.dim_symbols = [1]} {
  return %x : tensor<?x4xf32>
}
