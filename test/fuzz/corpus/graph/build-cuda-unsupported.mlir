// An op or dtype the CUDA target lacks is an error at its location, never a
// wrong result.

func.func @graph_0(%a: tensor<4x5xf64>, %b: tensor<5x2xf64>, %c: tensor<4x5xf32>) -> (tensor<4x2xf64>, tensor<4x5xf32>) attributes {dynoc.inputs = [{kind = "user", name = "L['a']"}, {kind = "user", name = "L['b']"}, {kind = "user", name = "L['c']"}]} {
  %1 = "aten.mm"(%a, %b) : (tensor<4x5xf64>, tensor<5x2xf64>) -> tensor<4x2xf64>
  %2 = "aten.cumsum"(%c) {dim = 1 : i64} : (tensor<4x5xf32>) -> tensor<4x5xf32>
  return %1, %2 : tensor<4x2xf64>, tensor<4x5xf32>
}
