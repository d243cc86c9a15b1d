// Nesting deep enough to exhaust the recursive parser's stack (a SIGSEGV) is
// refused on the text, at the place, before parsing.
// RUN: %python -c "print('module { func.func @f() attributes {a = ' + '[' * 100000 + ']' * 100000 + '} { return } }')" > %t.mlir
// RUN: not dynoc opt %t.mlir 2>&1 | FileCheck %s
// RUN: not dynoc build %t.mlir -o %t.so 2>&1 | FileCheck %s
// CHECK: .mlir:1:295: error: nesting deeper than 256 levels (brackets, braces, parentheses or angle brackets)
