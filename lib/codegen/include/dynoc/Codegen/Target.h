//===- Target.h - what a code generation target provides --------*- C++ -*-===//
//
// The graph emitter (GraphEmitter.h) is shared by the targets: it maps each
// aten op to a call of the target's kernel library (`dynoc_k::...`, one
// prelude per target with the same signatures), sizes every value, plans the
// workspace and prints the graph's shapes and run functions. A Target says
// what differs: which ops and dtypes its kernel library has, how a pointwise
// loop is printed (an OpenMP loop nest or a CUDA kernel), how memory is
// copied, and the run function's extra parameters (a CUDA stream).
//
//===----------------------------------------------------------------------===//
#ifndef DYNOC_CODEGEN_TARGET_H
#define DYNOC_CODEGEN_TARGET_H

#include "dynoc/Codegen/KernelDefinitions.h"
#include "dynoc/Codegen/PointwiseLoop.h"

#include "mlir/IR/Operation.h"
#include "llvm/ADT/StringRef.h"

#include <string>
#include <vector>

namespace dynoc {
namespace codegen {

/// Element types, as a set: what an op runs on.
enum DTypeSet : unsigned {
  kF32 = 1,
  kF64 = 2,
  kI64 = 4,
  kBool = 8,
  kBF16 = 16,
  kF16 = 32,
  kI32 = 64,
  kI8 = 128,
  kI16 = 256,
  kU8 = 512,
  kAnyDType = kF32 | kF64 | kI64 | kI32 | kBool,
  // The types data movement stores and nothing else computes in
  // (dynoc-widen-reduced-precision converts around the ops that compute).
  kNarrow = kBF16 | kF16 | kI8 | kI16 | kU8,
  kMovable = kAnyDType | kNarrow,
};

class Target {
public:
  virtual ~Target() = default;
  /// "cpu" or "cuda": the --target value and the manifest's "device".
  virtual llvm::StringRef name() const = 0;
  /// "CPU" or "CUDA", in messages ("... is not supported by the CPU backend").
  virtual llvm::StringRef displayName() const = 0;
  /// Whether the target's kernel library runs `opName` (one of the shared
  /// op table's entries). An op it lacks is a located build error.
  virtual bool supportsOp(llvm::StringRef opName) const = 0;
  /// The dtypes `op` runs on here, given those the shared emitter prints it
  /// for.
  virtual unsigned dtypes(mlir::Operation *op, unsigned shared) const {
    (void)op;
    return shared;
  }
  /// Ops whose kernels compute in bf16/f16 themselves (accumulating in f32),
  /// which dynoc-widen-reduced-precision leaves alone; dtypes() lists bf16/f16
  /// for them.
  virtual std::vector<std::string> reducedPrecisionOps() const { return {}; }
  /// Whether the kernel library's convolution primitive may refuse a shape
  /// (returning < 0), the generated code then running conv2d's im2col + GEMM
  /// with column scratch from the memory plan.
  virtual bool convolutionFallback() const { return false; }
  /// Whether a convolution's bias and the elementwise ops after it share one
  /// pass over its output: its primitive takes a clamp [lo, hi] applied after
  /// the bias (a ReLU or hardtanh alone after it), and where other ops follow,
  /// the bias is added in their loop instead of by the primitive. (The CPU's
  /// oneDNN convolutions add the bias as they compute.)
  virtual bool fuseConvolutionEpilogue() const { return false; }
  /// Whether its library has transposed 2-D convolutions (conv_transpose2d).
  virtual bool transposedConvolution() const { return false; }
  /// Whether its library has the attention backward kernel
  /// (`_scaled_dot_product_flash_attention_for_cpu_backward`); where not,
  /// dynoc-decompose writes it as GEMMs and a softmax.
  virtual bool attentionBackward() const { return false; }
  /// Whether its f32 attention kernel is as fast as GEMMs (a flash kernel);
  /// where not, dynoc-decompose writes f32/f64 attention as two batched
  /// GEMMs and a softmax.
  virtual bool fastAttentionF32() const { return false; }
  /// Whether its max pooling also writes the indices a backward pass reads
  /// (max_pool2d_indices).
  virtual bool poolingIndices() const { return false; }
  /// Whether its attention also writes the log-sum-exp of each query row
  /// (the result a training graph's forward saves for the backward).
  virtual bool attentionLogsumexp() const { return false; }
  /// Whether its convolution gradients take column scratch from the memory
  /// plan (the CPU's im2col GEMMs; cuDNN brings its own workspace).
  virtual bool convolutionBackwardColumns() const { return true; }
  /// The statements that compute `loop`; a kernel they launch goes to
  /// `definitions`.
  virtual std::string printPointwise(const PointwiseLoop &loop,
                                     KernelDefinitions &definitions) const = 0;
  /// Whether single elementwise ops are printed as pointwise loops too (the
  /// CPU target has vectorized library kernels for them instead).
  virtual bool singleOpsAsLoops() const { return false; }
  /// Whether the generated host code may read a tensor's elements (a 0-d
  /// argument used as a number): not where tensors live on a device.
  virtual bool hostReadsTensors() const = 0;
  /// The top of the generated source: includes and macros.
  virtual std::string sourceHeader() const = 0;
  /// Extra parameters of each graph's run function (", void *stream").
  virtual std::string runExtraParams() const { return ""; }
  /// The stream a run function's kernels are queued on, as the profiling
  /// hooks receive it: "stream" where runExtraParams() has one.
  virtual std::string streamExpr() const { return "nullptr"; }
  /// Bytes the target's kernel library needs past a graph's intermediates in
  /// its workspace (cuBLASLt's workspace).
  virtual int64_t extraWorkspaceBytes() const { return 0; }
  /// The statements that start a run function's body, once the workspace
  /// `ws` is bound; `extra` points at the extraWorkspaceBytes() past the
  /// intermediates.
  virtual std::string runPrologue(const std::string &extra) const {
    (void)extra;
    return "";
  }
  /// Attributes of a run function that makes `kernels` kernel calls (compile
  /// time: a compiler's analyses of one huge function).
  virtual std::string runAttributes(size_t kernels) const {
    (void)kernels;
    return "";
  }
  /// The run function's last statement.
  virtual std::string runEpilogue() const { return "  return 0;\n"; }
  /// The model ABI version the generated source implements.
  virtual int abiVersion() const = 0;
};

} // namespace codegen
} // namespace dynoc

#endif // DYNOC_CODEGEN_TARGET_H
