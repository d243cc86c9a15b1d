// A bf16 graph on each target. Both keep the GEMM in bf16 (f32 accumulation:
// oneDNN's matmul on the CPU, cuBLASLt with its bias epilogue on CUDA). The
// CPU widens every other computing op to f32 and the conversions fuse into
// the loops around them, so the pointwise chain reads bf16, computes in f32
// and rounds once when it stores. The CUDA target keeps the layer norm in
// bf16 too.
// RUN: dynoc build %s -o %t.mlir --emit=mlir && FileCheck %s --check-prefix=CPU < %t.mlir
// RUN: dynoc build %s -o %t.cpp --emit=cpp && FileCheck %s --check-prefix=CPP < %t.cpp
// RUN: dynoc build --target=cuda %s -o %t.cuda.mlir --emit=mlir && FileCheck %s --check-prefix=CUDA < %t.cuda.mlir
// RUN: dynoc build --target=cuda %s -o %t.cu --emit=cu && FileCheck %s --check-prefix=CU < %t.cu

func.func @graph_0(%x: tensor<4x16xbf16>, %w: tensor<8x16xbf16>, %b: tensor<8xbf16>, %g: tensor<8xbf16>) -> tensor<4x8xbf16> attributes {dynoc.inputs = [{kind = "user", name = "L['x']"}, {kind = "user", name = "L['w']"}, {kind = "user", name = "L['b']"}, {kind = "user", name = "L['g']"}]} {
  %0 = aten.t %w : (tensor<8x16xbf16>) -> tensor<16x8xbf16>
  %1 = aten.addmm %b, %x, %0 : (tensor<8xbf16>, tensor<4x16xbf16>, tensor<16x8xbf16>) -> tensor<4x8xbf16>
  %2 = aten.relu %1 : (tensor<4x8xbf16>) -> tensor<4x8xbf16>
  %3 = aten.mul.Tensor %2, %2 : (tensor<4x8xbf16>, tensor<4x8xbf16>) -> tensor<4x8xbf16>
  %4:3 = "aten.native_layer_norm"(%3, %g, %b) {eps = 1.0e-05 : f64, normalized_shape = array<i64: 8>, operand_segment_sizes = array<i32: 1, 1, 1>} : (tensor<4x8xbf16>, tensor<8xbf16>, tensor<8xbf16>) -> (tensor<4x8xbf16>, tensor<4x1xbf16>, tensor<4x1xbf16>)
  return %4#0 : tensor<4x8xbf16>
}
// CPU: dynoc.fusion_group "epilogue"
// CPU: aten.addmm {{.*}} -> tensor<4x8xbf16>
// CPU-NEXT: aten._to_copy {{.*}} -> tensor<4x8xf32>
// CPU-NEXT: aten.relu
// CPU-NEXT: aten._to_copy {{.*}} -> tensor<4x8xbf16>
// CPU-NEXT: aten._to_copy {{.*}} -> tensor<4x8xf32>
// CPU-NEXT: aten.mul.Tensor
// CPU: "aten.native_layer_norm"{{.*}} -> (tensor<4x8xf32>

// The rounding to bf16 between the ops stays in the fused loop.
// CPP: const float t{{[0-9]+}} = float(dynoc_k::bf16(t{{[0-9]+}}));

// CUDA: dynoc.fusion_group "epilogue"
// CUDA: aten.addmm {{.*}} -> tensor<4x8xbf16>
// CUDA-NEXT: aten._to_copy {{.*}} -> tensor<4x8xf32>
// CUDA-NEXT: aten.relu
// CUDA-NEXT: aten._to_copy {{.*}} -> tensor<4x8xbf16>
// CUDA-NEXT: aten._to_copy {{.*}} -> tensor<4x8xf32>
// CUDA-NEXT: aten.mul.Tensor
// CUDA-NEXT: aten._to_copy {{.*}} -> tensor<4x8xbf16>
// CUDA: "aten.native_layer_norm"{{.*}} : (tensor<4x8xbf16>, tensor<8xbf16>, tensor<8xbf16>) -> (tensor<4x8xbf16>

// CU: dynoc_k::bf16 *v{{[0-9]+}} =
// CU-NEXT: if (prof) prof->begin(prof->user, 0, stream);
// CU-NEXT: dynoc_k::gemm_bias(true, 4, 8, 16, {{.*}}, a0, a1, a2, v{{[0-9]+}})
// CU: dynoc_k::layer_norm(
