//===- opcodes_py311.cpp - CPython 3.11 bytecode as operations ------------===//
#include "opcodes.h"

#include <Python.h>
#include <opcode.h>

static_assert(PY_MAJOR_VERSION == 3 && PY_MINOR_VERSION == 11,
              "opcodes_py311.cpp decodes CPython 3.11 bytecode only");

namespace dynoc::capture {

const char *const kBytecodeVersion = "3.11";
const bool kNullBeforeCallable = true;

// One line per opcode: the table reads as a table.
// clang-format off
Op decodeOp(int opcode, int &oparg) {
  switch (opcode) {
  case CACHE: case NOP: case RESUME: case PRECALL: return Op::Nop;
#include "opcodes_common.inc"
  case POP_JUMP_FORWARD_IF_FALSE: return Op::PopJumpIfFalse;
  case POP_JUMP_FORWARD_IF_TRUE: return Op::PopJumpIfTrue;
  case POP_JUMP_FORWARD_IF_NONE: return Op::PopJumpIfNone;
  case POP_JUMP_FORWARD_IF_NOT_NONE: return Op::PopJumpIfNotNone;
  case POP_JUMP_BACKWARD_IF_FALSE: oparg = -oparg; return Op::PopJumpIfFalse;
  case POP_JUMP_BACKWARD_IF_TRUE: oparg = -oparg; return Op::PopJumpIfTrue;
  case POP_JUMP_BACKWARD_IF_NONE: oparg = -oparg; return Op::PopJumpIfNone;
  case POP_JUMP_BACKWARD_IF_NOT_NONE: oparg = -oparg; return Op::PopJumpIfNotNone;
  case JUMP_IF_FALSE_OR_POP: return Op::JumpIfFalseOrPop;
  case JUMP_IF_TRUE_OR_POP: return Op::JumpIfTrueOrPop;
  case JUMP_BACKWARD: case JUMP_BACKWARD_NO_INTERRUPT:
    oparg = -oparg;
    return Op::Jump;
  case FOR_ITER: return Op::ForIter;
  case LOAD_FAST: return Op::LoadFast;
  case LOAD_ATTR: oparg <<= 1; return Op::LoadAttr;
  case LOAD_METHOD: oparg = oparg << 1 | 1; return Op::LoadAttr;
  case KW_NAMES: return Op::KwNames;
  case MAKE_FUNCTION: return Op::MakeFunction;
  case COMPARE_OP: return Op::CompareOp;
  case UNARY_POSITIVE: return Op::UnaryPositive;
  case LIST_TO_TUPLE: return Op::ListToTuple;
  case FORMAT_VALUE: return Op::FormatValue;
  case PREP_RERAISE_STAR: return Op::PrepReraiseStar;
  case PRINT_EXPR: oparg = 0; return Op::PrintExpr; // pushes nothing
  default: return Op::Unsupported;
  }
}
// clang-format on

} // namespace dynoc::capture
