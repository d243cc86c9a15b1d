// RUN: dynoc opt %s --verify-diagnostics
// expected-error @+1 {{graph format version 7 is newer than this dynoc reads (1)}}
module attributes {dynoc.version = 7 : i64} {
}
