// RUN: not dynoc opt %s --pass=no-such-pass 2>&1 | FileCheck %s
// CHECK: dynoc opt: error: bad --pass 'no-such-pass'
module {}
