// uint8 images enter a CUDA graph and are converted there (a training loop's
// DataLoader batch): _to_copy and reshapes of ui8 are the header's conversion
// loop and byte copies (a library kernel of ui8 stays refused:
// build-cuda-unsupported.mlir).
// RUN: dynoc build --target=cuda %s -o %t.cu --emit=cu && FileCheck %s < %t.cu

func.func @graph_0(%x: tensor<8x1x4x4xui8>) -> (tensor<8x16xf32>, tensor<8x16xui8>) attributes {dynoc.inputs = [{kind = "user", name = "L['x']"}]} {
  // CHECK: dynoc_k::convert(
  %0 = "aten._to_copy"(%x) {dtype = f32} : (tensor<8x1x4x4xui8>) -> tensor<8x1x4x4xf32>
  %1 = "aten.view"(%0) {size = array<i64: 8, 16>} : (tensor<8x1x4x4xf32>) -> tensor<8x16xf32>
  // CHECK: dynoc_k::copy({{.*}}sizeof(uint8_t))
  %2 = "aten.view"(%x) {size = array<i64: 8, 16>} : (tensor<8x1x4x4xui8>) -> tensor<8x16xui8>
  return %1, %2 : tensor<8x16xf32>, tensor<8x16xui8>
}
