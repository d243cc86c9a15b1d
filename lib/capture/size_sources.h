//===- size_sources.h - Python ints that are tensor sizes -----*- C++ -*-===//
//
// A Python int read from a tensor's shape keeps a source that names the size:
// `L['x'].size()[0]`, or an affine expression of sizes such as
// `(L['x'].size()[0] * 2)`. Comparisons on such ints become size guards
// (`L['x'].size()[0] > 4`) rather than value guards, which lets a variant whose
// dims turn dynamic keep exactly the decisions its graphs depend on.
//
//===----------------------------------------------------------------------===//
#ifndef DYNOC_CAPTURE_SIZE_SOURCES_H
#define DYNOC_CAPTURE_SIZE_SOURCES_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <string>

namespace dynoc::capture {

/// The tensor part of a size source for a tensor that has no source and that
/// no graph of the region computed (`<untracked>.size()[0]`): a decision on
/// its sizes keeps the variant static. A tensor a graph computed is named by
/// its graph value (`___v[12].size()[0]`, `___v[12].numel()`); the recorder
/// expresses those in the inputs' sizes when its dims turn dynamic.
inline constexpr char kUntracked[] = "<untracked>";

/// Whether `source` names a tensor size, a tensor's element count, or an
/// expression of those.
bool isSizeSource(const std::string &source);

/// Whether `value` with `source` is an int that is a tensor size (bools and
/// int subclasses are not).
bool isSizeInt(PyObject *value, const std::string &source);

/// The source of `tensorSource.size()[dim]` with a negative `dim` counted from
/// the end of `rank` dims.
std::string sizeDimSource(const std::string &tensorSource, long long dim,
                          Py_ssize_t rank);

/// The source of `a OP b` for the BINARY_OP `oparg` when the result is an
/// affine expression of sizes (+ and - of sizes and ints, * by an int);
/// empty otherwise. An operand without a size source reads as its value.
std::string sizeArithmeticSource(int oparg, PyObject *a,
                                 const std::string &aSrc, PyObject *b,
                                 const std::string &bSrc);

/// The guard text of the comparison `a OP b` (a COMPARE_OP oparg) that came
/// out `holds`: `L['x'].size()[0] > 4`, or its negation `... <= 4`.
std::string sizeCompareGuard(int oparg, bool holds, PyObject *a,
                             const std::string &aSrc, PyObject *b,
                             const std::string &bSrc);

} // namespace dynoc::capture

#endif // DYNOC_CAPTURE_SIZE_SOURCES_H
