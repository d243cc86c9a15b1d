// Dynamic dims: the shape function resolves them from the input sizes and
// checks at run time what the types cannot promise; the memory plan sizes
// each slot with an expression of the dims, and relu and neg run in place
// over the sum, which dies as each reads it.

// LOG: graph 0: peak intermediate bytes depend on dynamic dims, 2 op(s) in place
func.func @graph_0(%x: tensor<?x8xf32>, %y: tensor<?x8xf32>) -> tensor<?x4xf32> attributes {dynoc.inputs = [{kind = "user", name = "x"}, {kind = "user", name = "y"}]} {
  // The profiling hooks (model_abi.h), and one span per kernel in the
  // manifest, named after its op and located where the op is.
  %0 = aten.add.Tensor %x, %y : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  %1 = aten.relu %0 : (tensor<?x8xf32>) -> tensor<?x8xf32>
  %2 = aten.neg %1 : (tensor<?x8xf32>) -> tensor<?x8xf32>
  %3 = aten.view %2 {size = array<i64: -1, 4>} : (tensor<?x8xf32>) -> tensor<?x4xf32>
  %4 = aten.abs %3 : (tensor<?x4xf32>) -> tensor<?x4xf32>
  return %4 : tensor<?x4xf32>
}
