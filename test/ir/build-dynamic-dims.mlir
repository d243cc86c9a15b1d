// Dynamic dims: the shape function resolves them from the input sizes and
// checks at run time what the types cannot promise; the memory plan sizes
// each slot with an expression of the dims, and relu and neg run in place
// over the sum, which dies as each reads it.
// RUN: dynoc build -O0 %s -o %t.cpp --emit=cpp 2>%t.log && FileCheck %s < %t.cpp
// RUN: FileCheck %s --check-prefix=LOG < %t.log

// LOG: graph 0: peak intermediate bytes depend on dynamic dims, 2 op(s) in place
func.func @graph_0(%x: tensor<?x8xf32>, %y: tensor<?x8xf32>) -> tensor<?x4xf32> attributes {dynoc.inputs = [{kind = "user", name = "x"}, {kind = "user", name = "y"}]} {
  // The profiling hooks (model_abi.h), and one span per kernel in the
  // manifest, named after its op and located where the op is.
  // CHECK-LABEL: void dynoc_model_set_profiler(const void *hooks)
  // CHECK-LABEL: static const char *dynoc_graph_0_resolve(
  // CHECK: p[0] = dynoc_k::broadcast(in[0][0], in[1][0]);
  // CHECK-NEXT: if (!(p[0] >= 0))
  // CHECK-NEXT: return "aten.add.Tensor at loc({{.*}}): the operands do not broadcast in dim 0";
  // CHECK: if (!(4 != 0 && (8 * p[0]) % 4 == 0))
  // CHECK-NEXT: return "aten.view at loc({{.*}}): the element count does not fit the new shape";
  // CHECK-NEXT: p[1] = (8 * p[0]) / 4;
  // CHECK-NEXT: o[0] = 0;
  // CHECK-NEXT: o[1] = o[0] + dynoc_k::align64(std::max<int64_t>({(4 * (8 * p[0]))}));
  // CHECK-LABEL: const char *dynoc_graph_0_shapes(
  // CHECK: out[0][0] = p[1];
  // CHECK-NEXT: out[0][1] = 4;
  // CHECK-NEXT: *workspace_bytes = o[1];
  // CHECK-LABEL: int dynoc_graph_0_run(
  // CHECK: float *v0 = reinterpret_cast<float *>(ws + o[0]);
  // CHECK: as[] = {(in[0][0] == 1 ? 0 : 8), 1}
  // CHECK: float *v1 = reinterpret_cast<float *>(ws + o[0]);
  // CHECK-NEXT: if (prof) prof->begin(prof->user, 1, nullptr);
  // CHECK-NEXT: dynoc_k::unary(v1, v0,
  // CHECK-NEXT: if (prof) prof->end(prof->user, 1, nullptr);
  // CHECK: float *v2 = reinterpret_cast<float *>(ws + o[0]);
  // CHECK-NEXT: if (prof) prof->begin(prof->user, 2, nullptr);
  // CHECK-NEXT: dynoc_k::unary(v2, v1,
  // CHECK: float *v4 = static_cast<float *>(outs[0]);
  // CHECK-NEXT: if (prof) prof->begin(prof->user, {{[0-9]+}}, nullptr);
  // CHECK-NEXT: dynoc_k::unary(v4, v2, (4 * p[1]),
  %0 = aten.add.Tensor %x, %y : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  %1 = aten.relu %0 : (tensor<?x8xf32>) -> tensor<?x8xf32>
  %2 = aten.neg %1 : (tensor<?x8xf32>) -> tensor<?x8xf32>
  %3 = aten.view %2 {size = array<i64: -1, 4>} : (tensor<?x8xf32>) -> tensor<?x4xf32>
  %4 = aten.abs %3 : (tensor<?x4xf32>) -> tensor<?x4xf32>
  return %4 : tensor<?x4xf32>
}
// CHECK-LABEL: kManifest[]
// CHECK: "kernels": [
// CHECK-NEXT: {
// CHECK-NEXT: "category": "kernel",
// CHECK-NEXT: "loc": "{{.*}}build-dynamic-dims.mlir:{{[0-9]+}}:8",
// CHECK-NEXT: "name": "add",
// CHECK-NEXT: "ops": [
// CHECK-NEXT: "aten.add.Tensor"
