//===- evaluator_operators.cpp - operators --------------------------------===//
//
// Binary and unary operators, comparisons, identity and membership tests,
// subscripts and string formatting: a Python scalar with a source that an
// operator consumes is guarded; a tensor reaching a branch is a break.
//
//===----------------------------------------------------------------------===//
#include "evaluator_internal.h"

#include <opcode.h>

namespace dynoc::capture {

PyObject *binaryOp(int op, PyObject *a, PyObject *b) {
  switch (op) {
  case NB_ADD:
    return PyNumber_Add(a, b);
  case NB_AND:
    return PyNumber_And(a, b);
  case NB_FLOOR_DIVIDE:
    return PyNumber_FloorDivide(a, b);
  case NB_LSHIFT:
    return PyNumber_Lshift(a, b);
  case NB_MATRIX_MULTIPLY:
    return PyNumber_MatrixMultiply(a, b);
  case NB_MULTIPLY:
    return PyNumber_Multiply(a, b);
  case NB_REMAINDER:
    return PyNumber_Remainder(a, b);
  case NB_OR:
    return PyNumber_Or(a, b);
  case NB_POWER:
    return PyNumber_Power(a, b, Py_None);
  case NB_RSHIFT:
    return PyNumber_Rshift(a, b);
  case NB_SUBTRACT:
    return PyNumber_Subtract(a, b);
  case NB_TRUE_DIVIDE:
    return PyNumber_TrueDivide(a, b);
  case NB_XOR:
    return PyNumber_Xor(a, b);
  case NB_INPLACE_ADD:
    return PyNumber_InPlaceAdd(a, b);
  case NB_INPLACE_AND:
    return PyNumber_InPlaceAnd(a, b);
  case NB_INPLACE_FLOOR_DIVIDE:
    return PyNumber_InPlaceFloorDivide(a, b);
  case NB_INPLACE_LSHIFT:
    return PyNumber_InPlaceLshift(a, b);
  case NB_INPLACE_MATRIX_MULTIPLY:
    return PyNumber_InPlaceMatrixMultiply(a, b);
  case NB_INPLACE_MULTIPLY:
    return PyNumber_InPlaceMultiply(a, b);
  case NB_INPLACE_REMAINDER:
    return PyNumber_InPlaceRemainder(a, b);
  case NB_INPLACE_OR:
    return PyNumber_InPlaceOr(a, b);
  case NB_INPLACE_POWER:
    return PyNumber_InPlacePower(a, b, Py_None);
  case NB_INPLACE_RSHIFT:
    return PyNumber_InPlaceRshift(a, b);
  case NB_INPLACE_SUBTRACT:
    return PyNumber_InPlaceSubtract(a, b);
  case NB_INPLACE_TRUE_DIVIDE:
    return PyNumber_InPlaceTrueDivide(a, b);
  case NB_INPLACE_XOR:
    return PyNumber_InPlaceXor(a, b);
  }
  PyErr_Format(PyExc_SystemError, "dynoc: unknown BINARY_OP %d", op);
  return nullptr;
}

/// Opcodes for operators, comparisons, subscripts and string formatting.
Evaluator::Step Evaluator::execOperators(Op op, int oparg) {
  PyObject *r = nullptr;
  switch (op) {
  case Op::BinaryOp: {
    Slot b = pop(), a = pop();
    std::string src =
        sizeArithmeticSource(oparg, a.value, a.source, b.value, b.source);
    // A size used as a number with a tensor (`torch.arange(n) + offset`):
    // the recorder may make it an input of the graph rather than pin it.
    const Slot *operandSize = nullptr;
    if (isTensor(a.value) && isSizeInt(b.value, b.source))
      operandSize = &b;
    else if (isTensor(b.value) && isSizeInt(a.value, a.source))
      operandSize = &a;
    if (operandSize)
      callTracker("enter_operand_size",
                  Py_BuildValue("(Os)", operandSize->value,
                                operandSize->source.c_str()));
    else if (src.empty())
      guardScalar(a), guardScalar(b);
    else // an affine expression of sizes; the other operand is pinned
      guardUnlessSize(a), guardUnlessSize(b);
    {
      Passthrough p;
      r = binaryOp(oparg, a.value, b.value);
    }
    if (operandSize)
      callTracker("exit_operand_size", PyTuple_New(0));
    Py_DECREF(a.value);
    Py_DECREF(b.value);
    STEP_FAIL_IF_NULL(r);
    push(r, std::move(src));
    break;
  }
  case Op::BinarySubscr: {
    Slot key = pop(), container = pop();
    guardScalar(key);
    // Slicing a tensor with bounds that are sizes: the ATen calls it makes
    // take them (recorded with their sources, as a call's size arguments).
    bool sliced = isTensor(container.value) &&
                  (PySlice_Check(key.value) || PyTuple_Check(key.value));
    if (sliced)
      callTracker("enter_subscript", Py_BuildValue("(O)", key.value));
    {
      Passthrough p;
      r = PyObject_GetItem(container.value, key.value);
    }
    if (sliced)
      callTracker("exit_native", PyTuple_New(0));
    std::string src;
    ItemSources items;
    if (r && isSizeTuple(container)) {
      src = sizeItemSource(container, key.value, items);
    } else if (PyLong_Check(key.value) && container.items) {
      Py_ssize_t i = PyLong_AsSsize_t(key.value);
      if (i < 0)
        i += Py_ssize_t(container.items->size());
      src = itemSource(container, i);
    } else {
      src = itemSource(container.source, key.value);
    }
    Py_DECREF(container.value);
    Py_DECREF(key.value);
    STEP_FAIL_IF_NULL(r);
    noteTensor(r, src);
    push(r, std::move(src), std::move(items));
    break;
  }
  case Op::StoreSubscr: {
    Slot key = pop(), container = pop(), value = pop();
    std::string target = itemSource(container.source, key.value);
    if (!target.empty())
      noteStore(target, &value);
    else // no source, or a key a source cannot spell
      noteAnonymousStore(container.value, key.value, false, &value);
    int rc;
    {
      Passthrough p;
      rc = PyObject_SetItem(container.value, key.value, value.value);
    }
    Py_DECREF(key.value), Py_DECREF(container.value), Py_DECREF(value.value);
    if (rc < 0)
      return Step::Error;
    break;
  }
  case Op::DeleteSubscr: {
    Slot key = pop(), container = pop();
    std::string target = itemSource(container.source, key.value);
    if (!target.empty())
      noteStore(target);
    else // no source, or a key a source cannot spell
      noteAnonymousStore(container.value, key.value, false);
    int rc;
    {
      Passthrough p;
      rc = PyObject_DelItem(container.value, key.value);
    }
    Py_DECREF(key.value), Py_DECREF(container.value);
    if (rc < 0)
      return Step::Error;
    break;
  }
  case Op::CompareOp: {
    Slot b = pop(), a = pop();
    bool sizes =
        (isSizeInt(a.value, a.source) || isSizeInt(b.value, b.source)) &&
        PyLong_CheckExact(a.value) && PyLong_CheckExact(b.value);
    if (sizes)
      guardUnlessSize(a), guardUnlessSize(b);
    else
      guardScalar(a), guardScalar(b);
    {
      Passthrough p;
      r = PyObject_RichCompare(a.value, b.value, oparg & 0xF);
    }
    if (sizes && r)
      callTracker("on_size_guard",
                  Py_BuildValue("(s)", sizeCompareGuard(
                                           oparg & 0xF, r == Py_True, a.value,
                                           a.source, b.value, b.source)
                                           .c_str()));
    Py_DECREF(a.value), Py_DECREF(b.value);
    STEP_FAIL_IF_NULL(r);
    push(r);
    if (oparg & kCompareToBool)
      return execOperators(Op::ToBool, 0);
    break;
  }
  case Op::ToBool: { // 3.13: the truth of a condition, as a bool
    Slot a = pop();
    // 3.13 reads a branch's condition here, before its jump: a break to
    // resume at either side of that jump (Evaluator::snapshot).
    bool top = isTensor(a.value) && nextIsConditionalJump() && enterTop(0, nullptr);
    if (top)
      topCondition = a.value;
    int t = truth(a);
    if (top)
      leaveTop();
    Py_DECREF(a.value);
    if (t < 0)
      return Step::Error;
    push(Py_NewRef(t ? Py_True : Py_False));
    break;
  }
  case Op::BinarySlice: // 3.12: [container, start, stop], as 3.11's pair
    if (execContainers(Op::BuildSlice, 2) != Step::Done)
      return Step::Error;
    return execOperators(Op::BinarySubscr, 0);
  case Op::StoreSlice: // [value, container, start, stop]
    if (execContainers(Op::BuildSlice, 2) != Step::Done)
      return Step::Error;
    return execOperators(Op::StoreSubscr, 0);
  case Op::IsOp: {
    Slot b = pop(), a = pop();
    r = ((a.value == b.value) ^ oparg) ? Py_True : Py_False;
    if (!a.source.empty() && (b.value == Py_None || a.value == Py_None))
      callTracker("on_guard_none",
                  Py_BuildValue("(si)", a.source.c_str(), a.value == Py_None));
    Py_INCREF(r);
    Py_DECREF(a.value), Py_DECREF(b.value);
    push(r);
    break;
  }
  case Op::ContainsOp: {
    Slot b = pop(), a = pop();
    guardScalar(a);
    int rc;
    {
      Passthrough p;
      rc = PySequence_Contains(b.value, a.value);
    }
    Py_DECREF(a.value), Py_DECREF(b.value);
    if (rc < 0)
      return Step::Error;
    r = (rc ^ oparg) ? Py_True : Py_False;
    Py_INCREF(r);
    push(r);
    break;
  }
  case Op::UnaryNegative:
  case Op::UnaryPositive:
  case Op::UnaryInvert: {
    Slot a = pop();
    guardScalar(a);
    {
      Passthrough p;
      r = op == Op::UnaryNegative   ? PyNumber_Negative(a.value)
          : op == Op::UnaryPositive ? PyNumber_Positive(a.value)
                                    : PyNumber_Invert(a.value);
    }
    Py_DECREF(a.value);
    STEP_FAIL_IF_NULL(r);
    push(r);
    break;
  }
  case Op::UnaryNot: {
    Slot a = pop();
    int t = truth(a);
    Py_DECREF(a.value);
    if (t < 0)
      return Step::Error;
    r = t ? Py_False : Py_True;
    Py_INCREF(r);
    push(r);
    break;
  }
  case Op::FormatValue: { // {value!conv:spec}: 3.13 splits it in three
    Slot spec = (oparg & 0x4) ? pop() : Slot{};
    if ((oparg & 0x3) &&
        execOperators(Op::ConvertValue, oparg & 0x3) != Step::Done) {
      Py_XDECREF(spec.value);
      return Step::Error;
    }
    if (!spec.value)
      return execOperators(Op::FormatSimple, 0);
    push(spec.value);
    return execOperators(Op::FormatWithSpec, 0);
  }
  case Op::ConvertValue: {
    Slot v = pop();
    r = oparg == 1   ? PyObject_Str(v.value)
        : oparg == 2 ? PyObject_Repr(v.value)
                     : PyObject_ASCII(v.value);
    Py_DECREF(v.value);
    STEP_FAIL_IF_NULL(r);
    push(r);
    break;
  }
  case Op::FormatSimple: {
    Slot v = pop();
    if (PyUnicode_CheckExact(v.value)) {
      push(v.value);
      break;
    }
    r = PyObject_Format(v.value, nullptr);
    Py_DECREF(v.value);
    STEP_FAIL_IF_NULL(r);
    push(r);
    break;
  }
  case Op::FormatWithSpec: {
    Slot spec = pop(), v = pop();
    r = PyObject_Format(v.value, spec.value);
    Py_DECREF(v.value), Py_DECREF(spec.value);
    STEP_FAIL_IF_NULL(r);
    push(r);
    break;
  }
  case Op::BuildString: {
    PyObject *parts = PyTuple_New(oparg);
    STEP_FAIL_IF_NULL(parts);
    for (int i = oparg - 1; i >= 0; --i)
      PyTuple_SET_ITEM(parts, i, pop().value);
    PyObject *empty = PyUnicode_FromString("");
    r = empty ? PyUnicode_Join(empty, parts) : nullptr;
    Py_XDECREF(empty);
    Py_DECREF(parts);
    STEP_FAIL_IF_NULL(r);
    push(r);
    break;
  }
  default:
    return Step::Unhandled;
  }
  return Step::Done;
}

} // namespace dynoc::capture
