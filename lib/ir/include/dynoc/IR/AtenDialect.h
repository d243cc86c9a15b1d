//===- AtenDialect.h - the aten and dynoc dialects --------------*- C++ -*-===//
#ifndef DYNOC_IR_ATENDIALECT_H
#define DYNOC_IR_ATENDIALECT_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "dynoc/IR/AtenDialect.h.inc"
#include "dynoc/IR/WindowAttrs.h"
#include "dynoc/IR/DynocDialect.h.inc"

#include "mlir/Interfaces/ControlFlowInterfaces.h"

#define GET_OP_CLASSES
#include "dynoc/IR/AtenOps.h.inc"

#define GET_OP_CLASSES
#include "dynoc/IR/DynocOps.h.inc"

#endif // DYNOC_IR_ATENDIALECT_H
