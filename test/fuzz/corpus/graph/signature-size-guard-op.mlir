// A size guard with an unknown comparison is refused.

func.func @bad_op(%x: tensor<?x4xf32>) -> tensor<?x4xf32> attributes {dynoc.guards = [{kind = "size", text = "t", terms = array<i64: 0, 0, 1>, constant = 0 : i64, op = "=<"}]} {
  return %x : tensor<?x4xf32>
}
