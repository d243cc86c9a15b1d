//===- evaluator_match.cpp - pattern matching -----------------------------===//
//
// match/case: MATCH_MAPPING, MATCH_SEQUENCE, MATCH_KEYS and MATCH_CLASS;
// the subject's type and the keys a pattern reads become guards.
//
//===----------------------------------------------------------------------===//
#include "evaluator_internal.h"

#include <opcode.h>

namespace dynoc::capture {

/// Opcodes for structural pattern matching (match/case).
Evaluator::Step Evaluator::execMatch(int opcode, int oparg) {
  switch (opcode) {
  case MATCH_MAPPING:
  case MATCH_SEQUENCE: {
    const Slot &subject = stack.back();
    guardType(subject);
    unsigned long flag =
        opcode == MATCH_MAPPING ? Py_TPFLAGS_MAPPING : Py_TPFLAGS_SEQUENCE;
    push(PyBool_FromLong(Py_TYPE(subject.value)->tp_flags & flag));
    break;
  }
  case MATCH_KEYS:
    if (!matchKeys(stack[stack.size() - 2], stack.back()))
      return Step::Error;
    break;
  case MATCH_CLASS: {
    Slot names = pop(), cls = pop(), subject = pop();
    guardType(subject);
    bool ok = matchClass(subject, cls.value, oparg, names.value);
    Py_DECREF(names.value), Py_DECREF(cls.value), Py_DECREF(subject.value);
    if (!ok)
      return Step::Error;
    break;
  }
  default:
    return Step::Unhandled;
  }
  return Step::Done;
}

} // namespace dynoc::capture
