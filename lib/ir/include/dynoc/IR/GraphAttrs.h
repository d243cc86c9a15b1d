//===- GraphAttrs.h - names of a graph file's metadata ----------*- C++ -*-===//
//
// A graph file is a module of `func.func`s, one per captured graph. These
// discardable attributes, owned by the `dynoc` dialect, make it
// self-describing; docs/graph-format.md documents them.
//
//===----------------------------------------------------------------------===//
#ifndef DYNOC_IR_GRAPHATTRS_H
#define DYNOC_IR_GRAPHATTRS_H

namespace dynoc::attrs {
/// Module: format version (i64).
inline constexpr char kVersion[] = "dynoc.version";
/// Func: "file:line:function" of the captured region.
inline constexpr char kEntry[] = "dynoc.entry";
/// Func: one dictionary per argument: {kind =
/// "user"|"parameter"|"buffer"|"constant"|"prepared", name = "..."}; a
/// "prepared" argument is a result of the graph's prepare function.
inline constexpr char kInputs[] = "dynoc.inputs";
/// Func: the output structure, as JSON text (docs/graph-format.md).
inline constexpr char kOutputs[] = "dynoc.outputs";
/// Func: in-place updates of inputs (user inputs and weights), as JSON text: [{"input": name,
/// "output": index}] — after a run, that output is copied into that input.
inline constexpr char kMutations[] = "dynoc.mutations";
/// Func: "backward" for the ops the autograd engine ran for one backward
/// pass (absent: a forward graph); docs/training.md.
inline constexpr char kKind[] = "dynoc.kind";
/// Func (backward): the gradients it leaves in leaves' `.grad`, as JSON text:
/// [{"input": leaf name, "output": index}].
inline constexpr char kGrads[] = "dynoc.grads";
/// Func: the function of a bundled model the graph belongs to (`dynoc build`
/// of several graph files: each is a function named after its graph); absent:
/// the model's one function.
inline constexpr char kFunction[] = "dynoc.function";
/// Func: one dictionary per guard: {kind, text, ...}.
inline constexpr char kGuards[] = "dynoc.guards";
/// Func: the safetensors file (relative to the .mlir) that holds the
/// parameters.
inline constexpr char kWeights[] = "dynoc.weights";
/// Func: marks a prepare function (dynoc-precompute-weights) and names the
/// graph whose "prepared" arguments it computes, once, at load.
inline constexpr char kPrepares[] = "dynoc.prepares";

/// Func: what each dim symbol of dynoc-infer-shapes stands for, in order:
/// "L['x'].size(0)" for a dynamic input dim, "aten.op result k dim d" for a
/// dim no shape rule expresses.
inline constexpr char kDimSymbols[] = "dynoc.dim_symbols";
/// Op: one affine map `()[s0, ...] -> (dims)` per result, the result's dims
/// in the dim symbols (set by dynoc-infer-shapes where a dim is symbolic).
inline constexpr char kShapes[] = "dynoc.shapes";
/// Op: sizes an int or int-array attribute holds that depend on dynamic
/// input dims (written by capture when a merge made them dynamic): {size =
/// affine_map<()[s0, ...] -> (entries)>}, one result per entry of the
/// attribute, in the dynamic input dims numbered in argument order (the
/// first symbols of dynoc-infer-shapes). An int-array attribute holds -1 at
/// those entries (an entry the map gives as -1 is inferred from the element
/// count); an int attribute (arange's `end`) keeps the captured value.
inline constexpr char kSymSizes[] = "dynoc.sym_sizes";

inline constexpr int kFormatVersion = 1;
} // namespace dynoc::attrs

#endif // DYNOC_IR_GRAPHATTRS_H
