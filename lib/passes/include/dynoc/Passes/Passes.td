//===- Passes.td - dynoc's graph passes --------------------*- tablegen -*-===//
//
// Each pass runs alone through `dynoc opt --pass=<name>` and has lit tests
// under test/passes/.
//
//===----------------------------------------------------------------------===//

#ifndef DYNOC_PASSES_TD
#define DYNOC_PASSES_TD

include "mlir/Pass/PassBase.td"

def Decompose : Pass<"dynoc-decompose", "mlir::func::FuncOp"> {
  let summary = "Rewrites composite aten ops into the core set";
  let description = [{
    Applies the decomposition table (lib/passes/Decompositions.td, MLIR
    declarative rewrite rules): for example `aten.silu(x)` becomes
    `aten.mul.Tensor(x, aten.sigmoid(x))` and `aten.square(x)` becomes
    `aten.mul.Tensor(x, x)`. Ops not in the table are left alone.
    With `attention-backward` (a target whose library has no attention
    backward kernel: CUDA), `_scaled_dot_product_flash_attention_for_cpu_backward`
    becomes the probabilities recomputed from the scores and the GEMMs of its
    gradient (scores of L x S per head are materialized). With
    `attention-f32` (a target whose f32 attention kernel is slow: CUDA), f32
    and f64 attention whose log-sum-exp nothing reads becomes softmax(Q K^T *
    scale) V.
  }];
  let options = [
    Option<"attentionBackward", "attention-backward", "bool", "false",
           "decompose the attention backward (no kernel for it on the target)">,
    Option<"attentionF32", "attention-f32", "bool", "false",
           "decompose f32/f64 attention (the target's f32 kernel is slow)">
  ];
  let constructor = "dynoc::createDecomposePass()";
}

def WidenReducedPrecision
    : Pass<"dynoc-widen-reduced-precision", "mlir::func::FuncOp"> {
  let summary = "Computes bf16/f16 ops in f32 and 8/16-bit integer ops in i32";
  let description = [{
    Every aten op that computes (all but data movement: views, transposes,
    slicing, concatenation, gathers, conversions, fills) and has a bf16 or f16
    operand or result reads those operands through `aten._to_copy` to f32,
    computes in f32, and its result converts back with `aten._to_copy`. This
    is how ATen's CPU kernels treat these types, so results match eager mode
    to the rounding of each op's result. `dynoc build` runs it at every -O
    level: the CPU code generator stores bf16/f16 but computes in f32 only.
    int8, int16 and uint8 ops compute in i32 the same way (stored narrow,
    converted around each op that computes): wrapping arithmetic and the
    bitwise ops give the same result modulo 2^8 or 2^16 either way.
    A target whose kernels compute some ops in bf16/f16 themselves (the CUDA
    target's cuBLASLt GEMMs, accumulating in f32) names them in `keep`; those
    ops keep their bf16/f16 values (their 8/16-bit integers still widen).
  }];
  let options = [
    ListOption<"keepOps", "keep", "std::string",
               "ops that compute in bf16/f16 themselves (aten.mm, ...)">
  ];
  let constructor = "dynoc::createWidenReducedPrecisionPass()";
}

def InferShapes : Pass<"dynoc-infer-shapes", "mlir::func::FuncOp"> {
  let summary = "Infers result shapes and dtypes, static and symbolic";
  let description = [{
    Each dynamic input dim becomes a symbol (listed in the function's
    `dynoc.dim_symbols`, e.g. "L['x'].size(0)"); shape functions
    (lib/passes/ShapeFunctions.cpp: broadcasting, view with -1, matmuls,
    convolution and pooling windows, reductions, slices, concatenation, ...)
    compute each result's dims as affine expressions of them. A `?` result dim
    that the operands fix becomes static; a result type that contradicts its
    operands (a static dim, the rank, or the dtype) is an error at the op; an
    op with symbolic result dims gets `dynoc.shapes`, one map per result, such
    as `affine_map<()[s0] -> (s0 * 2, 4)>`. Dims no rule expresses (a
    data-dependent size, an op without a shape function) get a fresh symbol.
  }];
  let constructor = "dynoc::createInferShapesPass()";
}

def Canonicalize : Pass<"dynoc-canonicalize", "mlir::func::FuncOp"> {
  let summary = "Removes aten ops that do nothing or undo each other";
  let description = [{
    Graph values are immutable, so copies (clone, contiguous, alias, detach,
    lift_fresh, eval dropout, a `_to_copy` to its own dtype) are their operand;
    a reshape, expand, flatten or (un)squeeze to the operand's own static type
    is the operand; a reshape of a reshape reads the first one's operand;
    `t(t(x))`, `neg(neg(x))` and a transpose of the same transpose are `x`;
    multiplying or dividing by 1, adding or subtracting 0 and `pow(x, 1)` are
    `x`. Ops left without users are removed. (Folding constants: ops on
    weights alone are computed at load, by dynoc-precompute-weights.)
  }];
  let constructor = "dynoc::createCanonicalizePass()";
}

def FoldBatchNorm : Pass<"dynoc-fold-batchnorm", "mlir::func::FuncOp"> {
  let summary = "Folds eval-mode batch norm into the convolution before it";
  let description = [{
    batch_norm(convolution(x, W, b)) with training = false becomes
    convolution(x, W * s, (b - mean) * s + beta), s = gamma / sqrt(var + eps)
    per output channel; the new weight and bias are ops on the weights. The
    convolution must have no other user, the batch norm's statistics results
    none, and its weight, bias, mean and variance must all be given.
  }];
  let constructor = "dynoc::createFoldBatchNormPass()";
}

def PrecomputeWeights : Pass<"dynoc-precompute-weights", "mlir::ModuleOp"> {
  let summary = "Moves ops on the weights alone into a function run at load";
  let description = [{
    An op whose operands all come from parameters, buffers or constants (or
    from such ops) gives the same value on every call. Those ops move into a
    new function `<graph>__prepare` (attribute `dynoc.prepares`), which the
    runtime runs once when it loads the model; the graph takes the values it
    still reads as new trailing arguments of kind "prepared", named
    `<graph>__prepare:<k>` for the prepare function's result k. Views,
    transposes, copies and expands of a weight itself stay in the graph (the
    kernels read them in place). Ops with dynamic result shapes stay too.
  }];
  let constructor = "dynoc::createPrecomputeWeightsPass()";
}

def Fusion : Pass<"dynoc-fuse", "mlir::func::FuncOp"> {
  let summary = "Groups ops the code generator emits as one kernel";
  let description = [{
    Wraps each chain of single-use elementwise ops of one result shape into a
    `dynoc.fusion_group` of kind `elementwise`, and a GEMM or convolution with
    the elementwise chain that consumes it into one of kind `epilogue`.
    Elementwise here: relu, neg, abs, sqrt, rsqrt, add/sub/mul/div with a
    tensor (broadcast) or a scalar, maximum, minimum, and eval-mode batch norm
    (a per-channel affine). Exp, tanh, sigmoid, silu and gelu stay alone: their
    standalone kernels are vectorized.
  }];
  let constructor = "dynoc::createFusionPass()";
  let dependentDialects = ["dynoc::DynocDialect"];
}

def BucketAllReduces : Pass<"dynoc-bucket-all-reduces", "mlir::func::FuncOp"> {
  let summary = "Merges a graph's all-reduces into buckets, as DDP does";
  let description = [{
    DDP's gradient averaging in a backward graph is one `dynoc.all_reduce`
    per parameter, issued where its gradient is computed. This pass merges
    them, in the order the graph issues them, into buckets of about
    `cap-mb` MiB (the first bucket `first-cap-mb`: DDP's defaults are 25
    and 1): the members' inputs are flattened and concatenated, one
    all-reduce is issued where the bucket's last gradient is computed, and
    each member's result is its slice of the bucket's, reshaped. Only
    all-reduces of static shape that one `dynoc.wait_tensor` reads, of the
    same process group, reduce op and element type, share a bucket; a
    bucket closes early where a member's result is read before the next
    all-reduce. The reduction is elementwise, so results are the same.
  }];
  let options = [
    Option<"capMb", "cap-mb", "double", "25.0",
           "bucket size in MiB (DDP's bucket_cap_mb)">,
    Option<"firstCapMb", "first-cap-mb", "double", "1.0",
           "the first bucket's size in MiB (DDP's first bucket)">
  ];
  let constructor = "dynoc::createBucketAllReducesPass()";
}

def DeferWaits : Pass<"dynoc-defer-waits", "mlir::func::FuncOp"> {
  let summary = "Moves collectives' waits, and what needs them, as late as "
                "their uses allow";
  let description = [{
    Reorders a graph with collectives by the last collective each op
    depends on: first every op that reads no collective's result (the rest
    of the backward pass, and every collective's start, in their order),
    then each collective's `dynoc.wait_tensor` with the ops that need it, in
    the order the collectives were issued. The computation between a
    collective and its first use runs while it is in flight, and an
    optimizer's updates run bucket by bucket, those of the gradients
    communicated first before the last bucket is waited for. A stable sort
    by a key that only grows along uses: every value stays defined before its
    uses, and the collectives keep their relative order on every rank.
  }];
  let constructor = "dynoc::createDeferWaitsPass()";
}

#endif // DYNOC_PASSES_TD
