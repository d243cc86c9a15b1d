//===- exception_table.cpp - CPython 3.11 exception table lookup ----------===//
#include "exception_table.h"

namespace dynoc::capture {
namespace {

/// Reads one varint: 6 bits per byte, most significant first, bit 6 set on
/// every byte but the last. Bit 7 marks the first byte of an entry.
Py_ssize_t readVarint(const unsigned char *&p) {
  Py_ssize_t v = *p & 63;
  while (*p++ & 64)
    v = (v << 6) | (*p & 63);
  return v;
}

} // namespace

bool findExceptionHandler(PyCodeObject *co, Py_ssize_t pc,
                          ExceptionHandler &out) {
  const auto *p = reinterpret_cast<const unsigned char *>(
      PyBytes_AS_STRING(co->co_exceptiontable));
  const unsigned char *end = p + PyBytes_GET_SIZE(co->co_exceptiontable);
  while (p < end) {
    Py_ssize_t start = readVarint(p);
    Py_ssize_t length = readVarint(p);
    Py_ssize_t target = readVarint(p);
    Py_ssize_t depthLasti = readVarint(p);
    if (start > pc)
      return false; // entries are sorted by start
    if (pc < start + length) {
      out.target = target;
      out.depth = depthLasti >> 1;
      out.pushLasti = depthLasti & 1;
      return true;
    }
  }
  return false;
}

} // namespace dynoc::capture
