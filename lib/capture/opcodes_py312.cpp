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
  case EXTENDED_ARG: return Op::ExtendedArg;
  case POP_TOP: return Op::PopTop;
  case PUSH_NULL: return Op::PushNull;
  case COPY: return Op::Copy;
  case SWAP: return Op::Swap;
  case RETURN_VALUE: return Op::ReturnValue;
  case RETURN_CONST: return Op::ReturnConst;
  case POP_JUMP_IF_FALSE: return Op::PopJumpIfFalse;
  case POP_JUMP_IF_TRUE: return Op::PopJumpIfTrue;
  case POP_JUMP_IF_NONE: return Op::PopJumpIfNone;
  case POP_JUMP_IF_NOT_NONE: return Op::PopJumpIfNotNone;
  case JUMP_FORWARD: return Op::Jump;
  case JUMP_BACKWARD: case JUMP_BACKWARD_NO_INTERRUPT:
    oparg = -oparg;
    return Op::Jump;
  case GET_ITER: return Op::GetIter;
  case FOR_ITER: // past the END_FOR the loop exits through
    oparg += 1;
    return Op::ForIter;
  case END_FOR: oparg = 2; return Op::EndFor;
  case LOAD_FAST: case LOAD_FAST_CHECK: return Op::LoadFast;
  case LOAD_FAST_AND_CLEAR: return Op::LoadFastAndClear;
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
  case LOAD_ATTR: return Op::LoadAttr;
  case LOAD_SUPER_ATTR: return Op::LoadSuperAttr;
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
  case COMPARE_OP: oparg >>= 4; return Op::CompareOp;
  case BINARY_SLICE: return Op::BinarySlice;
  case STORE_SLICE: return Op::StoreSlice;
  case IS_OP: return Op::IsOp;
  case CONTAINS_OP: return Op::ContainsOp;
  case UNARY_NEGATIVE: return Op::UnaryNegative;
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
  case LOAD_ASSERTION_ERROR: return Op::LoadAssertionError;
  case BEFORE_WITH: return Op::BeforeWith;
  case WITH_EXCEPT_START: return Op::WithExceptStart;
  case MATCH_MAPPING: return Op::MatchMapping;
  case MATCH_SEQUENCE: return Op::MatchSequence;
  case MATCH_KEYS: return Op::MatchKeys;
  case MATCH_CLASS: return Op::MatchClass;
  case CALL_INTRINSIC_1:
    switch (oparg) {
    case INTRINSIC_PRINT: oparg = 1; return Op::PrintExpr; // pushes None
    case INTRINSIC_UNARY_POSITIVE: return Op::UnaryPositive;
    case INTRINSIC_LIST_TO_TUPLE: return Op::ListToTuple;
    default: return Op::Unsupported;
    }
  case CALL_INTRINSIC_2:
    return oparg == INTRINSIC_PREP_RERAISE_STAR ? Op::PrepReraiseStar
                                                : Op::Unsupported;
  default: return Op::Unsupported;
  }
}
// clang-format on

} // namespace dynoc::capture
