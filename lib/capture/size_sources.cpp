//===- size_sources.cpp - Python ints that are tensor sizes ---------------===//
#include "size_sources.h"

#include <opcode.h>

namespace dynoc::capture {
namespace {

/// An operand as it reads in an expression: its size source, else its value.
std::string operandText(PyObject *v, const std::string &src) {
  if (isSizeInt(v, src))
    return src;
  return std::to_string(PyLong_AsLongLong(v));
}

} // namespace

bool isSizeSource(const std::string &source) {
  return source.find(".size()[") != std::string::npos ||
         source.find(".numel()") != std::string::npos ||
         source.find(kUntracked) != std::string::npos;
}

bool isSizeInt(PyObject *value, const std::string &source) {
  return value && PyLong_CheckExact(value) && isSizeSource(source);
}

std::string sizeDimSource(const std::string &tensorSource, long long dim,
                          Py_ssize_t rank) {
  if (dim < 0)
    dim += rank;
  return tensorSource + ".size()[" + std::to_string(dim) + "]";
}

std::string sizeArithmeticSource(int oparg, PyObject *a,
                                 const std::string &aSrc, PyObject *b,
                                 const std::string &bSrc) {
  bool aSize = isSizeInt(a, aSrc), bSize = isSizeInt(b, bSrc);
  if (!(aSize || bSize) || !PyLong_CheckExact(a) || !PyLong_CheckExact(b))
    return {};
  const char *op = nullptr;
  switch (oparg) {
  case NB_ADD:
  case NB_INPLACE_ADD:
    op = " + ";
    break;
  case NB_SUBTRACT:
  case NB_INPLACE_SUBTRACT:
    op = " - ";
    break;
  case NB_MULTIPLY:
  case NB_INPLACE_MULTIPLY:
    if (aSize && bSize)
      return {}; // a product of sizes is not affine: a value guard pins it
    op = " * ";
    break;
  default:
    return {};
  }
  return "(" + operandText(a, aSrc) + op + operandText(b, bSrc) + ")";
}

std::string sizeCompareGuard(int oparg, bool holds, PyObject *a,
                             const std::string &aSrc, PyObject *b,
                             const std::string &bSrc) {
  static const char *const ops[] = {"<", "<=", "==", "!=", ">", ">="};
  static const int negated[] = {Py_GE, Py_GT, Py_NE, Py_EQ, Py_LE, Py_LT};
  if (oparg < Py_LT || oparg > Py_GE)
    return {};
  int op = holds ? oparg : negated[oparg];
  return operandText(a, aSrc) + " " + ops[op] + " " + operandText(b, bSrc);
}

} // namespace dynoc::capture
