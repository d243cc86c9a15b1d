// A size guard naming a dim its input lacks is refused.

func.func @bad_dim(%x: tensor<?x4xf32>) -> tensor<?x4xf32> attributes {dynoc.guards = [{kind = "size", text = "t", terms = array<i64: 0, 2, 1>, constant = 0 : i64, op = ">"}]} {
  return %x : tensor<?x4xf32>
}
