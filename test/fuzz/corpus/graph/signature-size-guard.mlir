// Size guards (`L['x'].size()[0] > 4`) carry the affine form the runtime
// checks: (input, dim, coefficient) triples, a constant and a comparison.

func.func @ok(%x: tensor<?x4xf32>) -> tensor<?x4xf32> attributes {dynoc.guards = [{kind = "size", text = "L['x'].size()[0] > 4", terms = array<i64: 0, 0, 1>, constant = -4 : i64, op = ">"}]} {
  return %x : tensor<?x4xf32>
}

