//===- CpuTarget.cpp - the CPU code generation target ---------------------===//
//
// C++ that the host compiler builds with OpenMP; its kernel library is
// prelude/dynoc_kernels*.h (oneDNN for GEMMs and convolutions, Sleef for
// vector math). A pointwise loop is printed as rows of the output's last dim
// in parallel (OpenMP), each row an `omp simd` loop, written out rather than
// called through a template so that the inner loop reads each operand as it
// is (dense, or one value per row) and vectorizes.
//
//===----------------------------------------------------------------------===//
#include "dynoc/Codegen/Dims.h"
#include "dynoc/CodegenCPU/CpuCodegen.h"

#include "mlir/IR/Operation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

namespace dynoc {
namespace {
using codegen::braceList;
using codegen::product;

/// A pointwise loop of rank >= 1 as a call of a file-scope function that
/// `definitions` holds once per distinct body: a model's repeated layers
/// share their loops, and the run function stays a list of calls (GCC's time
/// grows faster than linearly with a function's size: a 4,000-op graph
/// printed inline did not compile in 10 minutes).
std::string printCpuPointwise(const codegen::PointwiseLoop &k,
                              codegen::KernelDefinitions &definitions) {
  const std::string &ct = k.computeType;
  std::string stmts;
  for (auto [i, e] : llvm::enumerate(k.temps))
    stmts += llvm::formatv("        const {0} t{1} = {2};\n", ct, i, e).str();
  const size_t rank = k.shape.size();
  std::string call = "  {\n";
  for (auto [i, in] : llvm::enumerate(k.inputs))
    call += llvm::formatv("    const int64_t st{0}[] = {1};\n", i,
                          braceList(in.strides))
                .str();
  call += "    const int64_t shape[] = " + braceList(k.shape) + ";\n";
  if (rank == 0) {
    std::string body;
    for (size_t i = 0; i < k.inputs.size(); ++i)
      body += llvm::formatv("      const {0} x{1} = {0}({2}[0]);\n", ct, i,
                            k.inputs[i].buffer)
                  .str();
    return call + "    {\n" + body + stmts + "      " + k.output +
           "[0] = " + k.result + ";\n    }\n  }\n";
  }
  // The definition: element types are template parameters, the dims and
  // strides arguments; what the body computes and how each input's inner
  // stride reads are its text.
  std::string tparams = "class O", params = "O *out", args = k.output;
  for (size_t i = 0; i < k.inputs.size(); ++i) {
    tparams += llvm::formatv(", class I{0}", i).str();
    params +=
        llvm::formatv(", const I{0} *in{0}, const int64_t *st{0}", i).str();
    args += llvm::formatv(", {0}, st{1}", k.inputs[i].buffer, i).str();
  }
  std::string def = "template <" + tparams + ">\nstatic void " +
                    codegen::KernelDefinitions::kName.str() + "(" + params +
                    ", const int64_t *shape) {\n";
  def += "  int64_t n = 1;\n  for (int d = 0; d < " + std::to_string(rank) +
         "; ++d)\n    n *= shape[d];\n";
  def += llvm::formatv("  const int64_t inner = shape[{0}];\n"
                       "  const int64_t outer = inner ? n / inner : 0;\n"
                       "#pragma omp parallel for if (n > "
                       "dynoc_k::kParallelGrain)\n"
                       "  for (int64_t row = 0; row < outer; ++row) {{\n",
                       rank - 1)
             .str();
  for (size_t i = 0; i < k.inputs.size(); ++i)
    def += llvm::formatv("    int64_t off{0} = 0;\n", i).str();
  def += "    for (int64_t d = " + std::to_string(rank) +
         " - 2, rem = row; d >= 0; --d) {\n"
         "      int64_t idx = rem % shape[d];\n      rem /= shape[d];\n";
  for (size_t i = 0; i < k.inputs.size(); ++i)
    def += llvm::formatv("      off{0} += idx * st{0}[d];\n", i).str();
  def += "    }\n";
  std::string reads;
  for (auto [i, in] : llvm::enumerate(k.inputs)) {
    def += llvm::formatv("    const I{0} *p{0} = in{0} + off{0};\n", i).str();
    // The inner stride: 0 reads one value per row, 1 a dense row.
    const std::string &last = in.strides.back();
    std::string at = last == "0" ? "0"
                     : last == "1"
                         ? "i"
                         : llvm::formatv("i * st{0}[{1}]", i, rank - 1).str();
    reads +=
        llvm::formatv("      const {0} x{1} = {0}(p{1}[{2}]);\n", ct, i, at)
            .str();
  }
  def += "    O *dst = out + row * inner;\n#pragma omp simd\n"
         "    for (int64_t i = 0; i < inner; ++i) {\n" +
         reads + stmts + "      dst[i] = " + k.result + ";\n    }\n  }\n}\n\n";
  std::string name = definitions.define("dynoc_pointwise_", def);
  return call + "    " + name + "(" + args + ", shape);\n  }\n";
}

/// GEMMs that run on bf16/f16 themselves (prelude/dynoc_kernels_nn.h's
/// oneDNN matmuls): widened to f32 around sgemm, they spent most of a bf16
/// training step converting operands.
const llvm::StringRef kReducedPrecisionGemms[] = {"aten.mm", "aten.addmm",
                                                  "aten.linear", "aten.bmm"};

class CpuTarget final : public codegen::Target {
public:
  llvm::StringRef name() const override { return "cpu"; }
  llvm::StringRef displayName() const override { return "CPU"; }
  bool supportsOp(llvm::StringRef) const override { return true; }
  std::string
  printPointwise(const codegen::PointwiseLoop &loop,
                 codegen::KernelDefinitions &definitions) const override {
    return printCpuPointwise(loop, definitions);
  }
  unsigned dtypes(mlir::Operation *op, unsigned shared) const override {
    if (llvm::is_contained(kReducedPrecisionGemms,
                           op->getName().getStringRef()))
      return shared | codegen::kBF16 | codegen::kF16;
    return shared;
  }
  std::vector<std::string> reducedPrecisionOps() const override {
    return {std::begin(kReducedPrecisionGemms),
            std::end(kReducedPrecisionGemms)};
  }
  bool hostReadsTensors() const override { return true; }
  bool convolutionFallback() const override { return true; }
  bool transposedConvolution() const override { return true; }
  bool poolingIndices() const override { return true; }
  bool attentionBackward() const override { return true; }
  bool fastAttentionF32() const override { return true; }
  bool attentionLogsumexp() const override { return true; }
  std::string sourceHeader() const override {
    return "// Generated by dynoc build --target=cpu. Do not edit.\n"
           "#include \"dynoc_kernels.h\"\n\n"
           "#define DYNOC_EXPORT __attribute__((visibility(\"default\")))\n\n";
  }
  // GCC's points-to analysis grows faster than linearly with the pointers of
  // one function: a 4,000-op graph's run function spent 35 of 45 s in it. A
  // run function is a list of calls, which it does not help. Past 4,096
  // kernels (no model of the suite comes near) every optimization of one
  // function grows too (a 16,000-op graph: 154 s; 100,000 ops: over 20 GB,
  // killed), so the run function is compiled unoptimized: the kernels it calls
  // are functions of their own, optimized as always, and the calls between
  // them cost nanoseconds (16,000 ops: 10 s, 1 GB).
  std::string runAttributes(size_t kernels) const override {
    if (kernels > 4096)
      return "__attribute__((optimize(\"O0\"))) ";
    return kernels > 512 ? "__attribute__((optimize(\"no-tree-pta\"))) " : "";
  }
  int abiVersion() const override { return 3; }
};

} // namespace

const codegen::Target &cpuTarget() {
  static const CpuTarget target;
  return target;
}

} // namespace dynoc
