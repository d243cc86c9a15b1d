//===- opcodes_py313.cpp - CPython 3.13 bytecode as operations ------------===//
#include "opcodes.h"

#include <Python.h>
#include <opcode.h>

#define Py_BUILD_CORE
#include <internal/pycore_intrinsics.h>
#undef Py_BUILD_CORE

static_assert(PY_MAJOR_VERSION == 3 && PY_MINOR_VERSION == 13,
              "opcodes_py313.cpp decodes CPython 3.13 bytecode only");

namespace dynoc::capture {

const char *const kBytecodeVersion = "3.13";
const bool kNullBeforeCallable = false;

// One line per opcode: the table reads as a table.
// clang-format off
Op decodeOp(int opcode, int &oparg) {
  switch (opcode) {
  case CACHE: case NOP: case RESUME: return Op::Nop;
#include "opcodes_common.inc"
#include "opcodes_since312.inc"
  case FOR_ITER: // past the END_FOR and POP_TOP the loop exits through
    oparg += 2;
    return Op::ForIter;
  case END_FOR: oparg = 1; return Op::EndFor;
  case LOAD_FAST: case LOAD_FAST_CHECK: return Op::LoadFast;
  case LOAD_FAST_LOAD_FAST: return Op::LoadFastLoadFast;
  case STORE_FAST_STORE_FAST: return Op::StoreFastStoreFast;
  case STORE_FAST_LOAD_FAST: return Op::StoreFastLoadFast;
  case CALL_KW: return Op::CallKw;
  case MAKE_FUNCTION: oparg = 0; return Op::MakeFunction;
  case SET_FUNCTION_ATTRIBUTE: return Op::SetFunctionAttribute;
  case COMPARE_OP: oparg = (oparg >> 5) | (oparg & kCompareToBool); return Op::CompareOp;
  case TO_BOOL: return Op::ToBool;
  case CONVERT_VALUE: return Op::ConvertValue;
  case FORMAT_SIMPLE: return Op::FormatSimple;
  case FORMAT_WITH_SPEC: return Op::FormatWithSpec;
  default: return Op::Unsupported;
  }
}
// clang-format on

} // namespace dynoc::capture
