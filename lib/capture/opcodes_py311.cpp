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
  case EXTENDED_ARG: return Op::ExtendedArg;
  case POP_TOP: return Op::PopTop;
  case PUSH_NULL: return Op::PushNull;
  case COPY: return Op::Copy;
  case SWAP: return Op::Swap;
  case RETURN_VALUE: return Op::ReturnValue;
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
  case JUMP_FORWARD: return Op::Jump;
  case JUMP_BACKWARD: case JUMP_BACKWARD_NO_INTERRUPT:
    oparg = -oparg;
    return Op::Jump;
  case GET_ITER: return Op::GetIter;
  case FOR_ITER: return Op::ForIter;
  case LOAD_FAST: return Op::LoadFast;
  case LOAD_CLOSURE: return Op::LoadClosure;
  case STORE_FAST: return Op::StoreFast;
  case DELETE_FAST: return Op::DeleteFast;
  case MAKE_CELL: return Op::MakeCell;
  case COPY_FREE_VARS: return Op::CopyFreeVars;
  case LOAD_DEREF: return Op::LoadDeref;
  case STORE_DEREF: return Op::StoreDeref;
  case DELETE_DEREF: return Op::DeleteDeref;
  case LOAD_NAME: return Op::LoadName;
  case STORE_NAME: return Op::StoreName;
  case DELETE_NAME: return Op::DeleteName;
  case LOAD_BUILD_CLASS: return Op::LoadBuildClass;
  case SETUP_ANNOTATIONS: return Op::SetupAnnotations;
  case LOAD_CONST: return Op::LoadConst;
  case LOAD_GLOBAL: return Op::LoadGlobal;
  case STORE_GLOBAL: return Op::StoreGlobal;
  case DELETE_GLOBAL: return Op::DeleteGlobal;
  case LOAD_ATTR: oparg <<= 1; return Op::LoadAttr;
  case LOAD_METHOD: oparg = oparg << 1 | 1; return Op::LoadAttr;
  case STORE_ATTR: return Op::StoreAttr;
  case DELETE_ATTR: return Op::DeleteAttr;
  case IMPORT_NAME: return Op::ImportName;
  case IMPORT_FROM: return Op::ImportFrom;
  case KW_NAMES: return Op::KwNames;
  case CALL: return Op::Call;
  case CALL_FUNCTION_EX: return Op::CallFunctionEx;
  case MAKE_FUNCTION: return Op::MakeFunction;
  case BINARY_OP: return Op::BinaryOp;
  case BINARY_SUBSCR: return Op::BinarySubscr;
  case STORE_SUBSCR: return Op::StoreSubscr;
  case DELETE_SUBSCR: return Op::DeleteSubscr;
  case COMPARE_OP: return Op::CompareOp;
  case IS_OP: return Op::IsOp;
  case CONTAINS_OP: return Op::ContainsOp;
  case UNARY_NEGATIVE: return Op::UnaryNegative;
  case UNARY_POSITIVE: return Op::UnaryPositive;
  case UNARY_NOT: return Op::UnaryNot;
  case UNARY_INVERT: return Op::UnaryInvert;
  case BUILD_TUPLE: return Op::BuildTuple;
  case BUILD_LIST: return Op::BuildList;
  case BUILD_SET: return Op::BuildSet;
  case BUILD_MAP: return Op::BuildMap;
  case BUILD_CONST_KEY_MAP: return Op::BuildConstKeyMap;
  case BUILD_SLICE: return Op::BuildSlice;
  case BUILD_STRING: return Op::BuildString;
  case LIST_APPEND: return Op::ListAppend;
  case SET_ADD: return Op::SetAdd;
  case MAP_ADD: return Op::MapAdd;
  case LIST_EXTEND: return Op::ListExtend;
  case SET_UPDATE: return Op::SetUpdate;
  case DICT_MERGE: return Op::DictMerge;
  case DICT_UPDATE: return Op::DictUpdate;
  case LIST_TO_TUPLE: return Op::ListToTuple;
  case FORMAT_VALUE: return Op::FormatValue;
  case GET_LEN: return Op::GetLen;
  case UNPACK_SEQUENCE: return Op::UnpackSequence;
  case UNPACK_EX: return Op::UnpackEx;
  case RAISE_VARARGS: return Op::RaiseVarargs;
  case RERAISE: return Op::Reraise;
  case PUSH_EXC_INFO: return Op::PushExcInfo;
  case POP_EXCEPT: return Op::PopExcept;
  case CHECK_EXC_MATCH: return Op::CheckExcMatch;
  case CHECK_EG_MATCH: return Op::CheckEgMatch;
  case PREP_RERAISE_STAR: return Op::PrepReraiseStar;
  case LOAD_ASSERTION_ERROR: return Op::LoadAssertionError;
  case BEFORE_WITH: return Op::BeforeWith;
  case WITH_EXCEPT_START: return Op::WithExceptStart;
  case PRINT_EXPR: oparg = 0; return Op::PrintExpr; // pushes nothing
  case MATCH_MAPPING: return Op::MatchMapping;
  case MATCH_SEQUENCE: return Op::MatchSequence;
  case MATCH_KEYS: return Op::MatchKeys;
  case MATCH_CLASS: return Op::MatchClass;
  default: return Op::Unsupported;
  }
}
// clang-format on

} // namespace dynoc::capture
