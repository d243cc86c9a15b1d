//===- DynocOps.td - dynoc's own ops -----------------------*- tablegen -*-===//
//
// Ops the passes introduce on top of the aten dialect (a fusion group holds
// the aten ops the code generator emits as one kernel), and torch's
// collectives (CollectiveOps.td).
//
//===----------------------------------------------------------------------===//

#ifndef DYNOC_IR_DYNOCOPS_TD
#define DYNOC_IR_DYNOCOPS_TD

include "dynoc/IR/AtenBase.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"

class Dynoc_Op<string mnemonic, list<Trait> traits = []> :
    Op<Dynoc_Dialect, mnemonic, traits>;

def Dynoc_FusionGroupOp : Dynoc_Op<"fusion_group",
    [IsolatedFromAbove, SingleBlock, RecursiveMemoryEffects]> {
  let summary = "aten ops emitted as one kernel";
  let description = [{
    The body's block arguments stand for the group's inputs, in order; its
    `dynoc.yield` gives the group's result. `kind` says how the code generator
    emits it:

    - `elementwise`: a chain of elementwise ops of one result shape, as one loop;
    - `epilogue`: a GEMM or convolution (the first op) followed by elementwise
      ops on its result, applied to the result while it is hot.

    Made by `dynoc-fuse` (lib/passes/Fusion.cpp).
  }];
  let arguments = (ins Variadic<AnyRankedTensor>:$inputs, StrAttr:$kind);
  let results = (outs AnyRankedTensor:$result);
  let regions = (region SizedRegion<1>:$body);
  let hasVerifier = 1;
  let assemblyFormat =
      "$kind `(` $inputs `)` attr-dict `:` functional-type($inputs, $result) $body";
}

def Dynoc_YieldOp : Dynoc_Op<"yield",
    [Pure, Terminator, ReturnLike, HasParent<"FusionGroupOp">]> {
  let summary = "the result of a fusion group";
  let arguments = (ins AnyRankedTensor:$value);
  let assemblyFormat = "$value attr-dict `:` type($value)";
}

include "dynoc/IR/CollectiveOps.td"

#endif // DYNOC_IR_DYNOCOPS_TD
