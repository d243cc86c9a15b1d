// An attribute value the CPU backend does not handle is an error naming it, at
// the op's location.

func.func @graph_0(%q: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> attributes {dynoc.inputs = [{kind = "user", name = "L['q']"}]} {
  %0, %1 = "aten._scaled_dot_product_flash_attention_for_cpu"(%q, %q, %q) {dropout_p = 5.000000e-01 : f64} : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> (tensor<1x2x4x8xf32>, tensor<1x2x4xf32>)
  return %0 : tensor<1x2x4x8xf32>
}
