//===- AtenBase.td - the aten and dynoc dialects -----------*- tablegen -*-===//
//
// `aten` mirrors PyTorch's ATen operator registry one op per overload; its ops are
// generated into AtenOps.td. `dynoc` has no ops: it owns the attributes that make a
// graph file self-describing (signature, guards, weights reference).
//
//===----------------------------------------------------------------------===//

#ifndef DYNOC_IR_ATENBASE_TD
#define DYNOC_IR_ATENBASE_TD

include "mlir/IR/OpBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Aten_Dialect : Dialect {
  let name = "aten";
  let cppNamespace = "::dynoc::aten";
  let summary = "PyTorch ATen operators, one op per overload";
  let description = [{
    Each op is an ATen overload named as PyTorch names it (`aten.add.Tensor`,
    `aten.convolution`). Tensor arguments are ranked tensor operands whose dims may be
    dynamic; every other argument is an attribute named after the ATen argument.
  }];
}

def Dynoc_Dialect : Dialect {
  let name = "dynoc";
  let cppNamespace = "::dynoc";
  let summary = "graph-file metadata: signature, guards, weights";
  let hasOperationAttrVerify = 1;
}

// Ops with a convolution's or pooling's window (a `kernel_size` or `dilation`
// attribute, or a `stride` with a `padding`): the window's attributes are checked when the op is
// verified, as ATen checks them, before any shape arithmetic divides by them
// (WindowAttrs.cpp).
def Aten_WindowAttrs : NativeOpTrait<"WindowAttrs"> {
  let cppNamespace = "::dynoc::aten::OpTrait";
}

class Aten_Op<string mnemonic, list<Trait> traits = []> :
    Op<Aten_Dialect, mnemonic, traits>;

#endif // DYNOC_IR_ATENBASE_TD
