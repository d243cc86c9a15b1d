module attributes {dynoc.version = 7 : i64} {
}
