// RUN: not dynoc opt %t.does-not-exist.mlir 2>&1 | FileCheck %s
// CHECK: error: cannot read '{{.*}}does-not-exist.mlir': No such file or directory
// RUN: not dynoc build %t.does-not-exist.mlir -o %t.so 2>&1 | FileCheck %s
