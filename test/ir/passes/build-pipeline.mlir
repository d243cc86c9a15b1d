// dynoc-build-pipeline is the list of graph passes `dynoc build` runs, in its
// order (lib/passes/Pipeline.cpp): at -O0 shape inference and widening only,
// from -O1 decomposition, canonicalization and fusion too.
// RUN: dynoc opt %s --pass='dynoc-build-pipeline{opt-level=0}' | FileCheck %s --check-prefix=O0
// RUN: dynoc opt %s --pass='dynoc-build-pipeline{opt-level=2}' | FileCheck %s --check-prefix=O2
// RUN: not dynoc opt %s --pass='dynoc-build-pipeline{opt-level=2 no-such=1}' 2>&1 | FileCheck %s --check-prefix=BAD

// O0-LABEL: func.func @linear_relu
// O0: aten.linear
// O0-NOT: dynoc.fusion_group
// O2-LABEL: func.func @linear_relu
// O2: dynoc.fusion_group "epilogue"
// O2: aten.linear
// O2-NEXT: aten.relu
// BAD: bad --pass
func.func @linear_relu(%x: tensor<4x16xf32>, %w: tensor<8x16xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = "aten.linear"(%x, %w, %b) : (tensor<4x16xf32>, tensor<8x16xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %1 = aten.relu %0 : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
}
