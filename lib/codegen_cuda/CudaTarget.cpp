//===- CudaTarget.cpp - the CUDA code generation target -------------------===//
//
// CUDA C++ that nvcc builds; its kernel library is prelude/*.cuh, the CPU
// prelude's interface with each function launching kernels on the run's
// stream (GEMMs through cuBLASLt, convolutions through cuDNN). A pointwise loop
// (a fusion group, or one elementwise op) is printed as a grid-stride kernel
// at file scope, once per distinct body (KernelDefinitions.h).
//
//===----------------------------------------------------------------------===//
#include "dynoc/Codegen/Dims.h"
#include "dynoc/CodegenCUDA/CudaCodegen.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FormatVariadic.h"

namespace dynoc {
namespace {
using codegen::braceList;
using codegen::product;

// The shared op table's entries whose kernels prelude/*.cuh implements.
const char *const kSupportedOps[] = {
    // elementwise
    "aten.relu", "aten.sigmoid", "aten.tanh", "aten.neg", "aten.exp",
    "aten.gelu", "aten.silu", "aten.sqrt", "aten.rsqrt", "aten.abs",
    "aten.logical_not", "aten.leaky_relu",
    "aten.hardtanh", "aten.clamp", "aten.clamp_min", "aten.clamp_max",
    "aten.add.Tensor", "aten.sub.Tensor", "aten.mul.Tensor",
    "aten.div.Tensor", "aten.div.Tensor_mode", "aten.div.Scalar_mode",
    "aten.maximum", "aten.minimum",
    "aten.bitwise_and.Tensor", "aten.bitwise_or.Tensor",
    "aten.bitwise_xor.Tensor", "aten.add.Scalar", "aten.sub.Scalar",
    "aten.mul.Scalar", "aten.div.Scalar", "aten.eq.Tensor", "aten.ne.Tensor",
    "aten.lt.Tensor", "aten.le.Tensor", "aten.gt.Tensor", "aten.ge.Tensor",
    "aten.eq.Scalar", "aten.ne.Scalar", "aten.lt.Scalar", "aten.le.Scalar",
    "aten.gt.Scalar", "aten.ge.Scalar", "aten.pow.Tensor_Scalar",
    "aten.where.self", "aten.masked_fill.Scalar", "aten.reciprocal",
    "aten.pow.Scalar", "aten.erf", "aten.bitwise_not", "dynoc.fusion_group",
    // GEMMs (cuBLASLt)
    "aten.mm", "aten.addmm", "aten.linear", "aten.bmm",
    // data movement
    "aten.t", "aten.transpose.int", "aten.permute", "aten.view",
    "aten._unsafe_view", "aten.reshape", "aten.clone", "aten.contiguous",
    "aten.alias", "aten.detach", "aten.flatten.using_ints", "aten.unsqueeze",
    "aten.squeeze.dim", "aten.dropout", "aten.lift_fresh_copy",
    "aten.lift_fresh", "aten._to_copy", "aten.view_as", "aten.expand",
    "aten.expand_as", "aten.as_strided", "aten.split.Tensor",
    "aten.unsafe_split.Tensor",
    "aten.slice.Tensor", "aten.select.int", "aten.cat", "aten.stack",
    "aten.unbind.int", "aten.gather", "aten.embedding", "aten.constant_pad_nd",
    "aten.cumsum", "aten.index.Tensor", "aten.index_put",
    // fills
    "aten.arange", "aten.arange.start", "aten.arange.start_step", "aten.full",
    "aten.ones", "aten.zeros", "aten.full_like", "aten.ones_like",
    "aten.zeros_like", "aten.zero", "aten.empty_like",
    "aten.empty.memory_format", "aten.new_ones", "aten.new_zeros",
    "aten.scalar_tensor",
    // normalizations, reductions, attention (prelude/library/nn.cu)
    "aten.native_layer_norm", "aten._softmax", "aten._log_softmax", "aten.sum",
    "aten.sum.dim_IntList", "aten.mean", "aten.mean.dim", "aten.amax",
    "aten.amin", "aten._scaled_dot_product_flash_attention_for_cpu",
    // convolutional networks (prelude/library/conv.cu; cuDNN)
    "aten.convolution", "aten.max_pool2d_with_indices",
    "aten.native_batch_norm", "aten._native_batch_norm_legit_no_training",
    // training (a step graph's loss and backward kernels)
    "aten.nll_loss_forward", "aten.mse_loss", "aten.convolution_backward",
    "aten.max_pool2d_with_indices_backward", "aten.embedding_dense_backward",
    // collectives (lib/codegen/prelude/dynoc_collectives.h)
    "dynoc.all_reduce", "dynoc.all_gather_into_tensor",
    "dynoc.reduce_scatter_tensor", "dynoc.broadcast", "dynoc.wait_tensor",
    "dynoc.all_to_all_single"};

const llvm::StringRef kGemmOps[] = {"aten.mm", "aten.addmm", "aten.linear",
                                    "aten.bmm"};
// Ops whose kernels read and write bf16/f16 and compute in f32 themselves:
// the GEMMs (cuBLASLt, f32 accumulation) and the block/warp kernels of
// prelude/library/nn.cu. The rest compute bf16/f16 through
// dynoc-widen-reduced-precision's conversions, which fuse into their loops.
const llvm::StringRef kReducedPrecisionOps[] = {
    "aten.mm",
    "aten.addmm",
    "aten.linear",
    "aten.bmm",
    "aten.native_layer_norm",
    "aten._softmax",
    "aten._log_softmax",
    "aten.sum",
    "aten.sum.dim_IntList",
    "aten.mean",
    "aten.mean.dim",
    "aten.amax",
    "aten.amin",
    "aten._scaled_dot_product_flash_attention_for_cpu",
    "aten.convolution",
    "aten.max_pool2d_with_indices"};

/// The contiguous strides of `shape`, as broadcastStrideList spells an
/// operand of the output's own dims: such an operand is read at the output's
/// index.
bool isDense(const codegen::PointwiseLoop::Input &in,
             const codegen::DimList &shape) {
  return in.strides == codegen::broadcastStrideList(shape, shape);
}

/// `loop` as a grid-stride kernel at file scope, a template over its
/// buffers' element types, and the statements that launch it. Dense operands
/// are read at the output's index, the rest at their broadcast strides
/// (constants where the shape is static, else passed by value). A loop that
/// another in the module already printed the same way launches that kernel. The
/// element offset of flat output index `i` in an operand read at `strides` over
/// `shape`, all literal: constant divisors, which the compiler turns into
/// multiplications (a division by a run-time 64-bit value is a long subroutine
/// on the GPU). Empty where a dim or stride is not literal.
std::string literalOffset(const codegen::DimList &shape,
                          const codegen::DimList &strides) {
  if (!llvm::all_of(shape, codegen::isLiteral) ||
      !llvm::all_of(strides, codegen::isLiteral))
    return "";
  std::string offset;
  int64_t inner = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    int64_t size = std::stoll(shape[d]), stride = std::stoll(strides[d]);
    if (stride != 0 && size != 1) {
      std::string index =
          inner == 1 ? "i" : "(i / " + std::to_string(inner) + ")";
      if (d > 0)
        index = "(" + index + " % " + std::to_string(size) + ")";
      offset += (offset.empty() ? "" : " + ") + index +
                (stride == 1 ? "" : " * " + std::to_string(stride));
    }
    inner *= size;
  }
  return offset.empty() ? "0" : offset;
}

std::string printCudaPointwise(const codegen::PointwiseLoop &k,
                               codegen::KernelDefinitions &definitions) {
  const std::string &ct = k.computeType;
  const size_t rank = k.shape.size();
  std::string host = "  {\n", body, tparams = "class IT, class TD",
              params = "IT n, TD *dst", args;
  host += "    const int64_t shape[] = " + braceList(k.shape) + ";\n";
  bool anyStrided = false;
  for (auto [i, in] : llvm::enumerate(k.inputs)) {
    tparams += llvm::formatv(", class T{0}", i).str();
    params += llvm::formatv(", const T{0} *b{0}", i).str();
    args += ", " + in.buffer;
    if (rank > 0 && isDense(in, k.shape)) {
      body += llvm::formatv("        const {0} x{1} = {0}(b{1}[i]);\n", ct, i)
                  .str();
      continue;
    }
    if (std::string offset = literalOffset(k.shape, in.strides);
        !offset.empty()) {
      body += llvm::formatv("        const {0} x{1} = {0}(b{1}[{2}]);\n", ct, i,
                            offset)
                  .str();
      continue;
    }
    anyStrided = true;
    host += llvm::formatv("    const int64_t st{0}[] = {1};\n", i,
                          braceList(in.strides))
                .str();
    params += llvm::formatv(", dynoc_k::Arr8 s{0}", i).str();
    args += llvm::formatv(", dynoc_k::Arr8(st{0}, {1})", i, rank).str();
    body += llvm::formatv("        const {0} x{1} = {0}(b{1}[dynoc_k::offsetOf("
                          "i, sh, s{1}, {2})]);\n",
                          ct, i, rank)
                .str();
  }
  if (anyStrided) {
    params += ", dynoc_k::Arr8 sh";
    args += ", dynoc_k::Arr8(shape, " + std::to_string(rank) + ")";
  }
  for (auto [i, e] : llvm::enumerate(k.temps))
    body += llvm::formatv("        const {0} t{1} = {2};\n", ct, i, e).str();
  // Each thread computes U elements a grid stride apart per iteration
  // (dynoc_k::kPointwiseUnroll), all loads before any store: that many loads
  // in flight per thread instead of one (on an H100 a bf16 batch-norm + ReLU6
  // pass over 77 MB took 58 us with one element per thread, 52 with four). An
  // output written in place is read at its own index only, so the order is
  // safe.
  std::string definition =
      "template <" + tparams + ">\n__global__ void " +
      codegen::KernelDefinitions::kName.str() + "(" + params +
      ") {\n"
      "  constexpr int U = dynoc_k::kPointwiseUnroll;\n"
      "  const IT step = IT(gridDim.x) * blockDim.x;\n"
      "  for (IT i0 = blockIdx.x * IT(blockDim.x) + threadIdx.x; i0 < n;\n"
      "       i0 += U * step) {\n"
      "    TD r[U];\n"
      "#pragma unroll\n"
      "    for (int u = 0; u < U; ++u) {\n"
      "      const IT i = i0 + u * step;\n"
      "      if (i < n) {\n" +
      body + "        r[u] = " + k.result +
      ";\n"
      "      }\n"
      "    }\n"
      "#pragma unroll\n"
      "    for (int u = 0; u < U; ++u)\n"
      "      if (i0 + u * step < n)\n"
      "        dst[i0 + u * step] = r[u];\n"
      "  }\n}\n\n";
  std::string kernel = definitions.define("dynoc_pointwise_", definition);
  // The index type (IT): unsigned where the element count is a literal below
  // 2^31, so that every offset fits too.
  std::string n = product(k.shape);
  bool narrow = codegen::isLiteral(n) && std::stoll(n) < (int64_t(1) << 31);
  host += std::string("    ") + (narrow ? "DYNOC_LAUNCH32(" : "DYNOC_LAUNCH(") +
          kernel + ", " + n + ", " + k.output + args + ");\n  }\n";
  return host;
}

// The data movement ops the emitter writes as a conversion or a byte copy
// (GraphEmitter::emitCopy), not through the library's typed kernels.
constexpr const char *kConvertOrCopyOps[] = {
    "aten._to_copy",     "aten.view",          "aten._unsafe_view",
    "aten.reshape",      "aten.clone",         "aten.contiguous",
    "aten.alias",        "aten.detach",        "aten.flatten.using_ints",
    "aten.unsqueeze",    "aten.squeeze.dim",   "aten.lift_fresh_copy",
    "aten.lift_fresh",   "aten.view_as"};

class CudaTarget final : public codegen::Target {
public:
  CudaTarget() {
    for (const char *n : kSupportedOps)
      ops.insert(n);
#define DYNOC_UNARY_FUNCTION(OP, EXPRESSION, DTYPES, ATTRIBUTES) ops.insert(OP);
#include "dynoc/Codegen/UnaryFunctions.def"
#define DYNOC_BINARY_FUNCTION(OP, EXPRESSION, DTYPES) ops.insert(OP);
#include "dynoc/Codegen/BinaryFunctions.def"
  }
  llvm::StringRef name() const override { return "cuda"; }
  llvm::StringRef displayName() const override { return "CUDA"; }
  bool supportsOp(llvm::StringRef opName) const override {
    return ops.contains(opName);
  }
  unsigned dtypes(mlir::Operation *op, unsigned shared) const override {
    // cuBLASLt runs the GEMMs on f32, bf16 and f16 (not f64).
    llvm::StringRef n = op->getName().getStringRef();
    if (llvm::is_contained(kGemmOps, n) || n == "aten.convolution")
      return codegen::kF32 | codegen::kBF16 | codegen::kF16;
    if (llvm::is_contained(kReducedPrecisionOps, n))
      shared = shared | codegen::kBF16 | codegen::kF16;
    // Accumulation adds atomically: f32, f64, i32 and i64 (library/data.cu).
    if (n == "aten.index_put")
      if (auto acc = op->getAttrOfType<mlir::BoolAttr>("accumulate");
          acc && acc.getValue())
        shared &= codegen::kF32 | codegen::kF64 | codegen::kI64 |
                  codegen::kI32;
    // Its pooling compares in float (prelude/dynoc_cuda_kernels.cuh): not
    // f64 or integer planes (i64: the indices).
    if (n == "aten.max_pool2d_with_indices")
      shared &= codegen::kF32 | codegen::kBF16 | codegen::kF16 | codegen::kI64;
    // Its atomic-add kernels (prelude/dynoc_cuda_kernels.cuh) are f32 only.
    if (n == "aten.embedding_dense_backward")
      shared &= ~codegen::kF64;
    // Its reductions and softmax are instantiated for f32, bf16 and f16 only.
    if (n.startswith("aten.sum") || n.startswith("aten.mean") ||
        n == "aten.amax" || n == "aten.amin" || n == "aten._softmax" ||
        n == "aten._log_softmax")
      shared &= codegen::kF32 | codegen::kBF16 | codegen::kF16;
    // Conversions and reshapes are a header template's conversion loop or a
    // byte copy (dynoc_k::convert, dynoc_k::copy): any element type, so that
    // uint8 images enter a graph and are converted there.
    if (llvm::is_contained(kConvertOrCopyOps, n))
      return shared;
    // Its data movement kernels are not instantiated for 8/16-bit integers.
    return shared & ~(codegen::kI8 | codegen::kI16 | codegen::kU8);
  }
  std::vector<std::string> reducedPrecisionOps() const override {
    return {std::begin(kReducedPrecisionOps), std::end(kReducedPrecisionOps)};
  }
  std::string printPointwise(const codegen::PointwiseLoop &loop,
                             codegen::KernelDefinitions &defs) const override {
    return printCudaPointwise(loop, defs);
  }
  bool singleOpsAsLoops() const override { return true; }
  bool fuseConvolutionEpilogue() const override { return true; }
  bool poolingIndices() const override { return true; }
  bool convolutionBackwardColumns() const override { return false; }
  bool hostReadsTensors() const override { return false; }
  std::string sourceHeader() const override {
    return "// Generated by dynoc build --target=cuda. Do not edit.\n"
           "#include \"dynoc_cuda.cuh\"\n\n"
           "#define DYNOC_EXPORT __attribute__((visibility(\"default\")))\n\n";
  }
  std::string runExtraParams() const override { return ", void *stream"; }
  std::string streamExpr() const override { return "stream"; }
  // cuBLASLt/cuDNN's workspace and the slack that aligns it (RunScope).
  int64_t extraWorkspaceBytes() const override { return (8 << 20) + 256; }
  std::string runPrologue(const std::string &extra) const override {
    return "  dynoc_k::RunScope scope(stream, " + extra +
           ", dynoc_k::kGemmWorkspaceBytes);\n";
  }
  std::string runEpilogue() const override {
    return "  return dynoc_k::finish();\n";
  }
  int abiVersion() const override { return 4; }

private:
  llvm::StringSet<> ops;
};

} // namespace

const codegen::Target &cudaTarget() {
  static const CudaTarget target;
  return target;
}

std::vector<std::string> cudaSupportedOps() {
  return {std::begin(kSupportedOps), std::end(kSupportedOps)};
}

} // namespace dynoc
