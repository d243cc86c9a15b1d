//===- Decompositions.td - composite aten ops -> core ops --*- tablegen -*-===//
//
// The decomposition table of `dynoc-decompose`: one declarative rewrite rule
// per composite op. A rule's intermediate ops take the type of the value they
// are computed from (`returnType`); the last takes the replaced op's.
//
//===----------------------------------------------------------------------===//

include "mlir/IR/PatternBase.td"
include "dynoc/IR/AtenOps.td"

// silu(x) = x * sigmoid(x)
def : Pat<(AtenSiluOp $x),
          (AtenMulTensorOp $x, (AtenSigmoidOp $x, (returnType $x)))>;

// square(x) = x * x
def : Pat<(AtenSquareOp $x), (AtenMulTensorOp $x, $x)>;

// hardswish(x) = x * hardsigmoid(x)
def : Pat<(AtenHardswishOp $x),
          (AtenMulTensorOp $x, (AtenHardsigmoidOp $x, (returnType $x)))>;

// t(x) = transpose(x, 0, 1) for 2-D x (t of a 0-D or 1-D tensor is itself)
def IsRank2 : Constraint<CPred<
    "$0.getType().cast<::mlir::RankedTensorType>().getRank() == 2">>;
def : Pat<(AtenTOp:$t $x),
          (AtenTransposeIntOp $x, ConstantAttr<I64Attr, "0">,
                                  ConstantAttr<I64Attr, "1">),
          [(IsRank2 $x)]>;
