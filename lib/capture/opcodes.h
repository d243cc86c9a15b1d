//===- opcodes.h - CPython bytecode as the evaluator's operations -*- C++
//-*-===//
//
// The evaluator runs operations, not one CPython version's opcodes. Each
// supported version has a decoder (opcodes_py311.cpp, opcodes_py312.cpp,
// opcodes_py313.cpp; the extension built for a version links its own) that
// turns that version's opcode and argument into an `Op` and an argument with
// one meaning on every version:
//
//   - jumps: a signed distance in code units from the next instruction (the
//     one after the inline caches), so forward and backward forms are one op;
//   - LOAD_ATTR: the name index shifted left by one, bit 0 set for a method
//     load (3.11's LOAD_METHOD, 3.12's LOAD_ATTR with its low bit);
//   - COMPARE_OP: the comparison (Py_LT .. Py_GE), plus kCompareToBool when
//     the result is made a bool (3.13);
//   - FOR_ITER: the distance to the first instruction after the loop's
//     cleanup (3.12 skips END_FOR, 3.13 END_FOR and POP_TOP);
//   - CALL_INTRINSIC_1/2 of 3.12+: the operation 3.11 had an opcode for
//     (PRINT_EXPR, LIST_TO_TUPLE, UNARY_POSITIVE, PREP_RERAISE_STAR).
//
// What else differs between versions is a constant below.
//
//===----------------------------------------------------------------------===//
#ifndef DYNOC_CAPTURE_OPCODES_H
#define DYNOC_CAPTURE_OPCODES_H

#include <cstdint>

namespace dynoc::capture {

/// The operations the evaluator runs, named after the CPython opcodes they
/// come from. `Unsupported`: a frame holding it runs in CPython.
enum class Op : uint8_t {
  Unsupported,
  // Control flow, the stack.
  Nop, // CACHE, NOP, RESUME, PRECALL
  ExtendedArg,
  PopTop,
  PushNull,
  Copy,
  Swap,
  ReturnValue,
  ReturnConst,
  PopJumpIfFalse,
  PopJumpIfTrue,
  PopJumpIfNone,
  PopJumpIfNotNone,
  JumpIfFalseOrPop,
  JumpIfTrueOrPop,
  Jump, // JUMP_FORWARD, JUMP_BACKWARD, JUMP_BACKWARD_NO_INTERRUPT
  GetIter,
  ForIter,
  EndFor, // argument: how many values it pops
  // Names.
  LoadFast, // LOAD_FAST, LOAD_FAST_CHECK
  LoadClosure,
  LoadFastAndClear,
  LoadFastLoadFast,
  StoreFast,
  StoreFastStoreFast,
  StoreFastLoadFast,
  DeleteFast,
  MakeCell,
  CopyFreeVars,
  LoadDeref,
  StoreDeref,
  DeleteDeref,
  LoadName,
  StoreName,
  DeleteName,
  LoadBuildClass,
  SetupAnnotations,
  LoadConst,
  LoadGlobal,
  StoreGlobal,
  DeleteGlobal,
  LoadAttr,
  LoadSuperAttr,
  StoreAttr,
  DeleteAttr,
  ImportName,
  ImportFrom,
  // Calls.
  KwNames,
  Call,
  CallKw,
  CallFunctionEx,
  MakeFunction, // argument: the attributes on the stack (3.13: none)
  SetFunctionAttribute,
  // Operators.
  BinaryOp,
  BinarySubscr,
  StoreSubscr,
  DeleteSubscr,
  BinarySlice,
  StoreSlice,
  CompareOp,
  IsOp,
  ContainsOp,
  UnaryNegative,
  UnaryPositive,
  UnaryNot,
  UnaryInvert,
  ToBool,
  // Containers, strings, unpacking.
  BuildTuple,
  BuildList,
  BuildSet,
  BuildMap,
  BuildConstKeyMap,
  BuildSlice,
  BuildString,
  ListAppend,
  SetAdd,
  MapAdd,
  ListExtend,
  SetUpdate,
  DictMerge,
  DictUpdate,
  ListToTuple,
  FormatValue,
  ConvertValue,
  FormatSimple,
  FormatWithSpec,
  GetLen,
  UnpackSequence,
  UnpackEx,
  // Exceptions, with, interactive output.
  RaiseVarargs,
  Reraise,
  PushExcInfo,
  PopExcept,
  CheckExcMatch,
  CheckEgMatch,
  PrepReraiseStar,
  LoadAssertionError,
  BeforeWith,
  WithExceptStart,
  PrintExpr,
  // Structural pattern matching.
  MatchMapping,
  MatchSequence,
  MatchKeys,
  MatchClass,
};

/// COMPARE_OP's flag: the result is converted to a bool (3.13).
constexpr int kCompareToBool = 16;

/// This version's `opcode` with argument `oparg` (EXTENDED_ARG applied) as
/// an operation; `oparg` is rewritten to the operation's argument.
Op decodeOp(int opcode, int &oparg);

/// The CPython version the decoder is for, as "3.12".
extern const char *const kBytecodeVersion;

/// Where a call's NULL goes: before the callable (3.11, 3.12: LOAD_GLOBAL
/// and LOAD_ATTR push NULL, then the value) or after it (3.13).
extern const bool kNullBeforeCallable;

} // namespace dynoc::capture

#endif // DYNOC_CAPTURE_OPCODES_H
