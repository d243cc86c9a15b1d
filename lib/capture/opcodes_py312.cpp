//===- opcodes_py312.cpp - CPython 3.12 bytecode as operations ------------===//
#include "opcodes.h"

#include <Python.h>
#include <opcode.h>

#define Py_BUILD_CORE
#include <internal/pycore_intrinsics.h>
#undef Py_BUILD_CORE

static_assert(PY_MAJOR_VERSION == 3 && PY_MINOR_VERSION == 12,
              "opcodes_py312.cpp decodes CPython 3.12 bytecode only");

namespace dynoc::capture {

const char *const kBytecodeVersion = "3.12";
const bool kNullBeforeCallable = true;

// One line per opcode: the table reads as a table.
// clang-format off
Op decodeOp(int opcode, int &oparg) {
  switch (opcode) {
  case CACHE: case NOP: case RESUME: return Op::Nop;
#include "opcodes_common.inc"
#include "opcodes_since312.inc"
  case FOR_ITER: // past the END_FOR the loop exits through
    oparg += 1;
    return Op::ForIter;
  case END_FOR: oparg = 2; return Op::EndFor;
  case LOAD_FAST: case LOAD_FAST_CHECK: return Op::LoadFast;
  case KW_NAMES: return Op::KwNames;
  case MAKE_FUNCTION: return Op::MakeFunction;
  case COMPARE_OP: oparg >>= 4; return Op::CompareOp;
  case FORMAT_VALUE: return Op::FormatValue;
  default: return Op::Unsupported;
  }
}
// clang-format on

} // namespace dynoc::capture
