// A string that is not UTF-8 is a located error when the graph is read (it
// was an exception escaping to std::terminate when the manifest was written).
// RUN: not dynoc build %S/Inputs/not-utf8.mlir -o %t.so 2>&1 | FileCheck %s
// RUN: not dynoc opt %S/Inputs/not-utf8.mlir 2>&1 | FileCheck %s
// CHECK: not-utf8.mlir:4:3: error: attribute 'dynoc.inputs' holds a string that is not valid UTF-8
// CHECK-NOT: terminate
